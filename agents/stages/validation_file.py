"""A file of measured validations (a JSON list of records, one per model or ladder), as the judge
and the student ladder validations keep them: read whole, one record replaced atomically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

__all__ = ["load_records", "store_record"]

Record = TypeVar("Record", bound=BaseModel)


def load_records(path: Path, model: type[Record], key: str, *, kind: str, remeasure: str) -> dict[str, Record]:
    """The records of `path` by their `key` field (none when the file does not exist yet); a file
    that is not a list of `kind` validations fails, naming `remeasure` (the command that measures again)."""
    if not path.is_file():
        return {}
    try:
        rows = json.loads(path.read_text())
        return {row[key]: model.model_validate(row) for row in rows}
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a {kind} validations file ({exc}); measure again with {remeasure}") from exc


def store_record(path: Path, record: Record, key: str, *, kind: str, remeasure: str) -> Path:
    """Store `record` in `path`, replacing the one of the same `key`; returns the file."""
    rows = {**load_records(path, type(record), key, kind=kind, remeasure=remeasure), getattr(record, key): record}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps([r.model_dump(mode="json") for r in rows.values()], indent=1))
    temporary.replace(path)
    return path
