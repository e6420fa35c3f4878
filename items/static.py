"""The source of a static template version: a group of stored items, as canonical JSON.

An imported benchmark (`templates_bank.static_items`) is stored as one version per group (its
template or group id) whose source is the group's items instead of template code. Regenerating
such a version returns these items (seed and size are ignored: there are no other instances), so
releases, exports, evaluation, re-verification and calibration treat it like any template. The
source is read as JSON on the host and never executed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, ValidationError

from itemsmith.items.hashing import canonical_json
from itemsmith.items.schema import Item

__all__ = ["STATIC_FORMAT", "StaticSourceError", "parse_static_source", "static_source", "static_source_of"]

STATIC_FORMAT = "itemsmith-static-items/1"


class StaticSourceError(ValueError):
    """A static version's source is not a group of items in `STATIC_FORMAT`."""


class _StaticSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str
    items: list[Item]


def static_source(items: Sequence[Item]) -> str:
    """The source of a static version holding `items` (canonical JSON: same items, same hash)."""
    if not items:
        raise StaticSourceError("a static group holds at least one item")
    return canonical_json({"format": STATIC_FORMAT, "items": [item.model_dump(mode="json") for item in items]})


def static_source_of(items: Sequence[str]) -> str:
    """`static_source` of items given as their canonical JSON each (an import keeps them so until it stores them)."""
    if not items:
        raise StaticSourceError("a static group holds at least one item")
    return f'{{"format":{canonical_json(STATIC_FORMAT)},"items":[{",".join(items)}]}}'


def parse_static_source(source: str) -> list[Item]:
    """The items of a static version's source (`StaticSourceError` when it is not one)."""
    try:
        parsed = _StaticSource.model_validate(json.loads(source))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise StaticSourceError(f"not a static item group ({STATIC_FORMAT}): {exc}") from None
    if parsed.format != STATIC_FORMAT:
        raise StaticSourceError(f"static item group of format {parsed.format!r}; this itemsmith reads {STATIC_FORMAT}")
    if not parsed.items:
        raise StaticSourceError("a static group holds at least one item")
    return parsed.items
