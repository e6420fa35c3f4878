"""Canonical JSON and the content hashes built on it (items, prompts, manifests).

Canonical JSON: keys sorted, no whitespace, UTF-8, NaN/Infinity refused. The same value gives
the same bytes in every process, so hashes of items and manifests are stable keys: the student
and judge caches look answers up by (model, prompt hash, item hash), and a release records the
hash of the items each template produced.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from itemsmith.items.schema import Item

__all__ = ["canonical_json", "item_hash", "prompt_hash", "sha256_hex"]


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def item_hash(item: Item) -> str:
    """sha256 of the item's canonical JSON (every field: question, options, answer, series, ...)."""
    return sha256_hex(canonical_json(item.model_dump(mode="json")))


def prompt_hash(prompt: str | list[dict[str, Any]]) -> str:
    """sha256 of a prompt: its text, or the canonical JSON of a list of chat messages."""
    return sha256_hex(prompt if isinstance(prompt, str) else canonical_json(prompt))
