"""An existing benchmark's file, uploaded to be imported into a bank (``POST /banks/imports``,
``POST /banks/{bank_id}/imports``): saved with the caller's uploads under its content hash and its
rows read before anything is stored (an `ItemImportError` lists every bad row, and the upload is
removed); the ``import`` job (`service.jobs`) finds it again by the hash and stores its items.

Layout: ``uploads_dir/<owner>/<bank>/imports/<sha256>/<file name>``. The file keeps its own name
(the items' provenance names it); the same file uploaded again is kept once.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, Literal

from pydantic import BaseModel

from itemsmith.service.handler_upload import UploadTooLarge, owner_folder

__all__ = ["ItemsFile", "UploadFormat", "items_file", "receive_items_file"]

# `hf` reads a saved dataset folder or a local Parquet file with `datasets`: the command line's
# (`itemsmith bank import-items --format hf`); an upload is one JSON file
UploadFormat = Literal["tse", "jsonl"]
_CHUNK = 1 << 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ItemsFile(BaseModel):
    """An uploaded benchmark file whose rows all read as items."""

    file_name: str
    sha256: str
    rows: int
    groups: int


def items_file(uploads_dir: Path, owner: str, bank: str, sha256: str, file_name: str) -> Path:
    """Where an uploaded benchmark file of the owner's bank is kept."""
    return uploads_dir / owner_folder(owner) / bank / "imports" / sha256 / file_name


def _file_name(name: str | None) -> str:
    """The upload's own name as one safe path part (a client may send any name)."""
    return _UNSAFE.sub("_", Path(name or "").name).lstrip("._")[:100] or "items.json"


def _save(stream: BinaryIO, target: Path, max_bytes: int) -> str:
    """Copy the upload to `target`, at most `max_bytes` (`UploadTooLarge`); its sha256."""
    digest, written = hashlib.sha256(), 0
    with target.open("xb") as sink:
        while block := stream.read(_CHUNK):
            written += len(block)
            if written > max_bytes:
                raise UploadTooLarge(f"the file is larger than the {max_bytes}-byte limit")
            digest.update(block)
            sink.write(block)
    return digest.hexdigest()


def receive_items_file(uploads_dir: Path, owner: str, bank: str, upload_name: str | None, stream: BinaryIO,
                       fmt: UploadFormat, mapping: Mapping[str, list[str]], *, max_bytes: int) -> ItemsFile:
    """Save the upload and read every row of it; `UploadTooLarge` past `max_bytes`, `ItemImportError`
    for bad rows (nothing is kept either way)."""
    from itemsmith.templates_bank.static_items import read_groups  # pandas and the audit: only for an upload

    name = _file_name(upload_name)
    imports = uploads_dir / owner_folder(owner) / bank / "imports"
    staging = imports / f".upload-{secrets.token_hex(8)}"
    created = [p for p in reversed(staging.parents[:4]) if not p.exists()]
    staging.mkdir(parents=True)
    kept = False
    try:
        partial = staging / name  # read under its own name: the errors name the file
        sha = _save(stream, partial, max_bytes)
        rows, groups = read_groups(str(partial), fmt, dict(mapping), keep_items=False)
        target = items_file(uploads_dir, owner, bank, sha, name)
        target.parent.mkdir(exist_ok=True)
        partial.replace(target)
        kept = True
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not kept:
            _remove_empty(created)
    return ItemsFile(file_name=name, sha256=sha, rows=rows, groups=len(groups))


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a refused upload created, deepest first, where nothing else came in meanwhile."""
    for folder in reversed(folders):
        try:
            folder.rmdir()
        except OSError:  # not empty: another upload uses it now
            return
