"""A handler's public identity: its name and the sha256 of its content, never where it lives.

A bank stores where its handler is on this machine (a built-in's name or a handler file's path);
everything that leaves the server (API responses, release manifests, exported rows, cards,
evaluation keys, error messages) names the handler by `HandlerRef` instead, so two deployments
with the same handler files give the same manifests and byte-identical exports.

- A built-in handler: its registry name, and the sha256 of the module that defines it.
- A handler file: the name of its handler class, and the sha256 over the handler file and every
  other regular file of its folder (the data files it reads), by file name, in name order.
- No handler (``static:NAME``, a bank of items imported from an existing benchmark, whose series
  are stored with the items): the spec itself, and the sha256 of it.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.handlers import BUILTIN_HANDLERS
from itemsmith.handlers.loader import HandlerSourceError, find_handler_class_name

__all__ = ["STATIC_HANDLER_PREFIX", "HandlerMismatch", "HandlerRef", "handler_label", "handler_ref", "is_static_handler",
           "redact_handler_paths", "require_same_handler", "static_handler"]

_CHUNK = 1 << 20
STATIC_HANDLER_PREFIX = "static:"


def static_handler(name: str) -> str:
    """The handler spec of a bank of imported items named `name` (no handler code, no data files)."""
    return f"{STATIC_HANDLER_PREFIX}{name}"


def is_static_handler(spec: str) -> bool:
    return spec.startswith(STATIC_HANDLER_PREFIX)


class HandlerRef(BaseModel):
    """A handler by name and content hash."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="a built-in's name, or the handler class of an uploaded handler")
    sha256: str = Field(description="sha256 of the handler's code and data files")

    @property
    def label(self) -> str:
        """``name@sha256:<first 12 hex digits>``: one string for keys and prose."""
        return f"{self.name}@sha256:{self.sha256[:12]}"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _folder_sha256(handler_file: Path) -> str:
    """The handler file and its folder's other regular files (not hidden, not in subfolders)."""
    digest = hashlib.sha256()
    files = sorted(p for p in handler_file.parent.iterdir()
                   if p.is_file() and not p.name.startswith(".") and p.suffix != ".pyc")
    for path in files:
        role = "handler" if path == handler_file else "data"
        digest.update(f"{role}\0{path.name}\0{_file_sha256(path)}\n".encode())
    return digest.hexdigest()


def _builtin_ref(name: str) -> HandlerRef:
    module = BUILTIN_HANDLERS[name].target.split(":")[0]
    spec = importlib.util.find_spec(module)
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    content = origin.read_bytes() if origin is not None and origin.is_file() else module.encode()
    return HandlerRef(name=name, sha256=hashlib.sha256(content).hexdigest())


@lru_cache(maxsize=1024)
def _file_ref(path: str, stamp: tuple[tuple[str, int, int], ...]) -> HandlerRef:  # cache key
    handler_file = Path(path)
    try:
        name = find_handler_class_name(handler_file.read_text(encoding="utf-8"))
    except (HandlerSourceError, OSError, UnicodeDecodeError, ValueError, SyntaxError):
        name = "handler"
    return HandlerRef(name=name, sha256=_folder_sha256(handler_file))


def _stamp(handler_file: Path) -> tuple[tuple[str, int, int], ...]:
    """What the cached hash depends on: every file's name, size and modification time."""
    return tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                        for p in handler_file.parent.iterdir() if p.is_file()))


def handler_ref(spec: str) -> HandlerRef:
    """The identity of a handler given as a built-in name or a handler file's path. A file
    that is gone keeps a stable identity derived from its file name only (never its folder)."""
    if spec in BUILTIN_HANDLERS:
        return _builtin_ref(spec)
    if is_static_handler(spec):
        return HandlerRef(name=spec, sha256=hashlib.sha256(b"static\0" + spec.encode()).hexdigest())
    handler_file = Path(spec)
    if not handler_file.is_file():
        return HandlerRef(name=handler_file.stem or "handler",
                          sha256=hashlib.sha256(b"missing\0" + handler_file.name.encode()).hexdigest())
    return _file_ref(str(handler_file.resolve()), _stamp(handler_file))


class HandlerMismatch(ValueError):
    """Templates of one handler offered to a bank of another."""


def require_same_handler(bank: str, bank_handler: str, handler: str) -> None:
    """Templates written on `handler` may enter the bank `bank` (of `bank_handler`) only when it is the
    same handler: the same name and content; else `HandlerMismatch` naming both. Checked before an
    authoring run that fills a bank starts, and before a run is imported into one."""
    ours, theirs = handler_ref(bank_handler), handler_ref(handler)
    if ours != theirs:
        raise HandlerMismatch(f"bank {bank!r} holds templates for the handler {ours.label}, not {theirs.label}: "
                              "create a bank for this handler (itemsmith bank create NAME --handler ...)")


def handler_label(handler: HandlerRef | str) -> str:
    """The label of a `HandlerRef`, or of the handler a spec names (an old manifest's string)."""
    return (handler if isinstance(handler, HandlerRef) else handler_ref(handler)).label


def redact_handler_paths(text: str, *specs: str) -> str:
    """`text` with each handler file's path (and its folder) replaced by the handler's label."""
    for spec in specs:
        if not spec or spec in BUILTIN_HANDLERS or is_static_handler(spec):
            continue
        label = handler_ref(spec).label
        for path in sorted({spec, str(Path(spec).resolve())}, key=len, reverse=True):
            text = text.replace(path, label)
        for folder in sorted({str(Path(spec).parent), str(Path(spec).resolve().parent)}, key=len, reverse=True):
            text = text.replace(folder, f"<{label}>")
    return text
