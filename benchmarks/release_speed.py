"""Wall time of `itemsmith release create` and `release export` of the curated bank, as a user runs
them (each command a fresh process: sandbox pools start from cold).

    python benchmarks/release_speed.py [--samples 2] [--workers 1] [--format jsonl] [--keep DIR]

Creates a SQLite bank with every curated template (78 templates over 7 handlers; ``-n 2``: 156
items), then times ``release create`` and ``release export``; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _itemsmith(env: dict[str, str], *args: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "from itemsmith.cli.app import app; app()", *args], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--format", default="jsonl")
    parser.add_argument("--keep", type=Path, default=None, help="keep the data folder here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="itemsmith-release-speed-"))
    env = {**os.environ, "ITEMSMITH_DATA_DIR": str(folder / "data")}
    env.pop("ITEMSMITH_DATABASE_URL", None)
    try:
        _itemsmith(env, "bank", "create", "curated", "--handler", "synthetic", "--owner", "bench")
        _itemsmith(env, "bank", "import-curated", "curated", "--reviewer", "bench")
        create_s = _itemsmith(env, "release", "create", "curated", "--by", "bench", "-n", str(args.samples),
                              "--workers", str(args.workers))
        export_s = _itemsmith(env, "release", "export", "curated@1", "-f", args.format, "-o", str(folder / "out"),
                              "--workers", str(args.workers))
        items = sum(1 for _ in (folder / "out" / "data.jsonl").open()) if args.format == "jsonl" else None
        print(json.dumps({"samples": args.samples, "workers": args.workers, "items": items,
                          "release_create_s": round(create_s, 1), "release_export_s": round(export_s, 1)}))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
