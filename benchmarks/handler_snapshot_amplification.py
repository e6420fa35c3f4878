"""Handler snapshot amplification: how much memory a sandbox worker takes to load a hostile
handler file whose loader sends a forged snapshot, every record's arrays naming the same 2 MiB
region of its data (tests/sandbox/test_handler_data.py, `forged_handler`); and, with
``--strings N``, a snapshot of N two-letter strings (5 bytes each in the snapshot).

    python benchmarks/handler_snapshot_amplification.py [--records 1000,100000] [--strings 8000000]
                                                        [--handler-memory-mb 4096] [--out FILE.json]

For each case a real worker (``SandboxPool``) starts on the handler file; a thread samples the
peak resident memory (VmHWM) of this process's child processes (the workers) every 20 ms.
Recorded: the worker's peak, the wall time and the outcome (the error the pool start raised, or
"loaded"). Before the layout rule and the decode
limit, the worker's peak grew about 2 MiB a record (147 MB, 759 MB, 2.2 GB at 2, 300, 1,000).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from itemsmith.sandbox import SandboxError, SandboxLimits, SandboxPool
from tests.sandbox.test_handler_data import forged_handler


def _peak_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


class PeakSampler(threading.Thread):
    """The peak VmHWM of this process's children (the workers), by pid."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peaks: dict[int, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self.done.is_set():
            for pid in [*_children(me), *self.peaks]:
                peak = _peak_kib(pid)
                if peak is not None:
                    self.peaks[pid] = max(peak, self.peaks.get(pid, 0))
            time.sleep(0.02)


def _case(folder: Path, source: str, limits: SandboxLimits) -> dict[str, Any]:
    folder.mkdir()
    path = folder / "forged.py"
    path.write_text(source)
    sampler = PeakSampler()
    sampler.start()
    started = time.monotonic()
    try:
        SandboxPool(str(path), limits=limits).close()
        outcome = "loaded"
    except SandboxError as exc:
        outcome = str(exc)
    wall = time.monotonic() - started
    sampler.done.set()
    sampler.join()
    return {"worker_peak_mb": round(max(sampler.peaks.values(), default=0) / 1024, 1), "wall_s": round(wall, 2),
            "outcome": outcome[:300]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", default="1000,100000", help="records of the shared-region case, comma-separated")
    parser.add_argument("--strings", type=int, default=8_000_000, help="strings of the strings case (0: skip it)")
    parser.add_argument("--handler-memory-mb", type=int, default=SandboxLimits().handler_memory_mb)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    limits = SandboxLimits(handler_memory_mb=args.handler_memory_mb)
    report: dict[str, Any] = {"benchmark": "handler_snapshot_amplification", "load_before": os.getloadavg(),
                              "handler_memory_mb": limits.handler_memory_mb,
                              "handler_snapshot_bytes": limits.handler_snapshot_bytes, "shared_region": {}}
    with tempfile.TemporaryDirectory(prefix="itemsmith-amplification-") as tmp:
        for records in (int(n) for n in args.records.split(",")):
            report["shared_region"][records] = _case(Path(tmp) / f"shared-{records}",
                                                     forged_handler(records=records), limits)
            print(f"{records} records: {report['shared_region'][records]}", file=sys.stderr, flush=True)
        if args.strings:
            report["strings"] = {args.strings: _case(Path(tmp) / "strings",
                                                     forged_handler(records=0, strings=args.strings), limits)}
    report["load_after"] = os.getloadavg()
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
