"""A bank's uploaded handler: saved with its data files in a folder of its own, then loaded
in the sandbox (never in the service process) to prove that it works.

Layout: ``uploads_dir/<owner>/<bank>/<upload id>/handler.py`` plus the data files, which the
handler reads from its own folder (a constructor taking ``data_dir`` gets that folder). A
fresh upload id per request means two requests never write the same folder.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from itemsmith.handlers.loader import HandlerSourceError, find_handler_class_name
from itemsmith.templates_bank.handler_identity import redact_handler_paths

__all__ = ["HANDLER_FILE", "UploadRejected", "UploadTooLarge", "check_handler", "new_upload_folder", "owner_folder",
           "save_upload", "store_handler"]

HANDLER_FILE = "handler.py"
MAX_DATA_FILES = 100
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_CHUNK = 1 << 20


class UploadRejected(ValueError):
    """The upload is malformed (file names, encoding, a handler that does not load): 422."""


class UploadTooLarge(ValueError):
    """The upload is over a size cap: 413."""


def owner_folder(owner: str) -> str:
    """A folder name for an owner: readable, and distinct for distinct owners."""
    slug = re.sub(r"[^a-z0-9]+", "-", owner.lower()).strip("-")[:40] or "owner"
    return f"{slug}-{hashlib.sha256(owner.encode()).hexdigest()[:8]}"


def _data_file_name(name: str | None) -> str:
    if not name or not _FILE_NAME.fullmatch(name) or ".." in name:
        raise UploadRejected(f"data file name {name!r} is not allowed: use letters, digits, '.', '_' and '-' only, "
                             "no folders")
    if name == HANDLER_FILE:
        raise UploadRejected(f"a data file may not be named {HANDLER_FILE!r} (that name is the handler's)")
    return name


def _copy_capped(source: BinaryIO, target: Path, budget: int, what: str) -> int:
    """Copy ``source`` to ``target``; raise `UploadTooLarge` past ``budget`` bytes."""
    written = 0
    with target.open("xb") as sink:
        while block := source.read(_CHUNK):
            written += len(block)
            if written > budget:
                raise UploadTooLarge(what)
            sink.write(block)
    return written


def save_upload(folder: Path, handler_source: str, data_files: Sequence[tuple[str | None, BinaryIO]], *,
                max_upload_bytes: int, max_handler_source_bytes: int) -> Path:
    """Write the handler and data files into ``folder`` (which must not exist) and return the
    handler file's path. On any error the folder is removed."""
    try:
        source_bytes = handler_source.encode("utf-8")
    except UnicodeEncodeError:
        raise UploadRejected("the handler source is not valid UTF-8 text") from None
    if len(source_bytes) > max_handler_source_bytes:
        raise UploadTooLarge(f"the handler source is {len(source_bytes)} bytes; the limit is {max_handler_source_bytes}")
    if len(data_files) > MAX_DATA_FILES:
        raise UploadRejected(f"{len(data_files)} data files; at most {MAX_DATA_FILES}")
    names = [_data_file_name(name) for name, _ in data_files]
    if len(set(names)) != len(names):
        raise UploadRejected(f"data file names repeat: {sorted({n for n in names if names.count(n) > 1})}")
    folder.mkdir(parents=True)
    try:
        handler_path = folder / HANDLER_FILE
        handler_path.write_bytes(source_bytes)
        budget = max_upload_bytes - len(source_bytes)
        for name, (_, stream) in zip(names, data_files, strict=True):
            too_large = f"the upload is larger than the {max_upload_bytes}-byte limit (at data file {name!r})"
            budget -= _copy_capped(stream, folder / name, budget, too_large)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return handler_path


def new_upload_folder(uploads_dir: Path, owner: str, bank: str) -> Path:
    return uploads_dir / owner_folder(owner) / bank / secrets.token_hex(8)


def store_handler(folder: Path, handler_source: str, data_files: Sequence[tuple[str | None, BinaryIO]], *,
                  max_upload_bytes: int, max_handler_source_bytes: int, check_s: float | None = None) -> Path:
    """`save_upload` then `check_handler` (loading bounded by `check_s` seconds); the folder is
    removed if either fails."""
    path = save_upload(folder, handler_source, data_files, max_upload_bytes=max_upload_bytes,
                       max_handler_source_bytes=max_handler_source_bytes)
    try:
        check_handler(path, check_s=check_s)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return path


def check_handler(handler_path: Path, *, check_s: float | None = None) -> None:
    """Load the handler in the sandbox (records() and every record's series(), in a hardened
    child, for at most `check_s` seconds when given); raise `UploadRejected` with the sandbox's
    message if it fails, the upload's paths replaced by the handler's name and hash. Source that
    does not even parse is refused before a sandbox worker is started."""
    from itemsmith.sandbox import SandboxError, SandboxPool, SandboxSettings  # only when a handler is checked

    try:
        find_handler_class_name(handler_path.read_text(encoding="utf-8"))
    except HandlerSourceError as exc:
        raise UploadRejected(str(exc)) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        raise UploadRejected(f"the handler source cannot be parsed: {type(exc).__name__}: {exc}") from None
    limits = None if check_s is None else SandboxSettings().sandbox.model_copy(update={"handler_load_s": check_s})
    try:
        SandboxPool(str(handler_path), limits=limits).close()
    except SandboxError as exc:
        raise UploadRejected(redact_handler_paths(str(exc), str(handler_path))) from None
