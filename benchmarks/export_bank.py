"""Export a bank of ~100,000 items: time and peak memory, regeneration measured apart from writing.

    python benchmarks/export_bank.py [--items 100000] [--templates 50] [--samples 100] [--workers 2]
                                     [--formats jsonl,hf,lm-eval,inspect] [--e2e jsonl] [--keep DIR] [--json]

Builds a SQLite bank of curated synthetic templates, then measures, each phase in a fresh
process so its peak RSS is its own:

1. ``release``: `create_release` (one sandbox generation pass, hashing and storing every item).
2. ``regenerate``: `Release.regenerated()` alone (a second sandbox pass, checked against the
   manifest, what ``release verify`` runs), spooling the items to a JSONL file.
3. ``write FORMAT``: the format's writer fed from the spool (parse + render + write), no sandbox.
4. ``e2e FORMAT`` (optional): the real `export_release`: the stored items read and written.

Seeds per template = items / (templates * samples). RSS is sampled every 10,000 rows to show
that memory stays flat. Sandbox workers are separate processes and are not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from itemsmith.items.schema import Item
from itemsmith.templates_bank.curated import load_curated
from itemsmith.templates_bank.exporters import EXPORTERS, ExportOptions, export_release
from itemsmith.templates_bank.exporters._rows import ExportRow
from itemsmith.templates_bank.releases import ReleaseCreate, create_release, get_release
from itemsmith.templates_bank.storage import BankCreate, create_bank, import_curated, open_session, upgrade

BANK = "bench"
RSS_EVERY = 10_000


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _sampled(rows: Iterator[Any], samples: list[tuple[int, float]]) -> Iterator[Any]:
    for n, row in enumerate(rows, 1):
        if n % RSS_EVERY == 0:
            samples.append((n, round(_rss_mib(), 1)))
        yield row


def _dir_mib(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


# --- phases (each run in its own process) ------------------------------------------------------


def phase_release(db: str, templates: int, samples: int, seeds: int, workers: int) -> dict[str, Any]:
    url = f"sqlite:///{db}"
    upgrade(url)
    chosen = [t.id for t in load_curated().values() if t.handler == "synthetic"][:templates]
    start = time.perf_counter()
    with open_session(url) as session:
        bank = create_bank(session, BankCreate(name=BANK, handler="synthetic", owner="bench"))
        import_curated(session, bank.id, reviewer="bench", template_ids=chosen)
        manifest = create_release(session, ReleaseCreate(bank=BANK, seeds=list(range(seeds)), num_samples=samples,
                                                         created_by="bench"), workers=workers).manifest
    return {"seconds": round(time.perf_counter() - start, 1), "items": manifest.counts.items,
            "templates": manifest.counts.templates, "peak_rss_mib": round(_peak_mib(), 1)}


def phase_regenerate(db: str, spool: Path, workers: int) -> dict[str, Any]:
    with open_session(f"sqlite:///{db}") as session:
        release = get_release(session, BANK)
    positions = {t.template_id: i for i, t in enumerate(release.manifest.templates)}
    rss: list[tuple[int, float]] = []
    start, n = time.perf_counter(), 0
    with spool.open("w") as sink:
        for entry, run in release.regenerated(workers=workers):
            for index, item in enumerate(run.items):
                n += 1
                if n % RSS_EVERY == 0:
                    rss.append((n, round(_rss_mib(), 1)))
                sink.write(json.dumps({"t": positions[entry.template_id], "seed": run.seed, "index": index,
                                       "item": item.model_dump(mode="json")}) + "\n")
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 1), "items": n, "items_per_s": round(n / seconds),
            "peak_rss_mib": round(_peak_mib(), 1), "rss_mib_every_10k": rss,
            "spool_mib": round(spool.stat().st_size / 2**20, 1)}


def phase_write(db: str, spool: Path, fmt: str, out: Path) -> dict[str, Any]:
    with open_session(f"sqlite:///{db}") as session:
        release = get_release(session, BANK)
    manifest, options = release.manifest, ExportOptions()

    def rows() -> Iterator[ExportRow]:
        with spool.open() as f:
            for line in f:
                raw = json.loads(line)
                entry = manifest.templates[raw["t"]]
                yield ExportRow(id=f"{entry.template_id}-{raw['seed']}-{raw['index']}", template=entry,
                                seed=raw["seed"], index=raw["index"], item=Item.model_validate(raw["item"]), image=None)

    out.mkdir(parents=True)
    rss: list[tuple[int, float]] = []
    start = time.perf_counter()
    EXPORTERS[fmt].write(_sampled(rows(), rss), manifest, out, options)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 1), "items_per_s": round(manifest.counts.items / seconds),
            "peak_rss_mib": round(_peak_mib(), 1), "rss_mib_every_10k": rss, "output_mib": _dir_mib(out)}


def phase_e2e(db: str, fmt: str, out: Path, workers: int) -> dict[str, Any]:
    with open_session(f"sqlite:///{db}") as session:
        release = get_release(session, BANK)
    start = time.perf_counter()
    report = export_release(release, fmt, out, workers=workers)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 1), "items": report.rows, "items_per_s": round(report.rows / seconds),
            "peak_rss_mib": round(_peak_mib(), 1), "output_mib": _dir_mib(out)}


# --- driver --------------------------------------------------------------------------------------


def _child(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "_phase", *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--templates", type=int, default=50)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--formats", default=",".join(sorted(EXPORTERS)))
    parser.add_argument("--e2e", default="", help="formats to export end to end (regeneration + writing)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the bank and outputs in this folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seeds = max(1, args.items // (args.templates * args.samples))
    work = args.keep or Path(tempfile.mkdtemp(prefix="itemsmith-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    db, spool = work / "bank.sqlite", work / "spool.jsonl"
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load": os.getloadavg()},
                              "setup": {"templates": args.templates, "seeds": seeds, "samples": args.samples,
                                        "workers": args.workers}}
    try:
        report["release"] = _child("release", str(db), str(args.templates), str(args.samples), str(seeds),
                                   str(args.workers))
        report["regenerate"] = _child("regenerate", str(db), str(spool), str(args.workers))
        for fmt in filter(None, args.formats.split(",")):
            report[f"write {fmt}"] = _child("write", str(db), str(spool), fmt, str(work / f"write-{fmt}"))
        for fmt in filter(None, args.e2e.split(",")):
            report[f"e2e {fmt}"] = _child("e2e", str(db), fmt, str(work / f"e2e-{fmt}"), str(args.workers))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{report['release']['items']} items: {args.templates} templates x {seeds} seeds x {args.samples} samples, "
          f"{args.workers} sandbox workers, {os.cpu_count()} CPUs")
    print(f"{'phase':18} {'seconds':>8} {'items/s':>8} {'peak RSS MiB':>13} {'output MiB':>11}  RSS every 10k rows")
    for phase, r in report.items():
        if phase in ("machine", "setup"):
            continue
        rss = " ".join(str(m) for _, m in r.get("rss_mib_every_10k", []))
        print(f"{phase:18} {r['seconds']:8} {r.get('items_per_s', ''):>8} {r['peak_rss_mib']:13} "
              f"{r.get('output_mib', r.get('spool_mib', '')):>11}  {rss}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_phase":
        phase, *rest = sys.argv[2:]
        handlers = {
            "release": lambda db, t, s, n, w: phase_release(db, int(t), int(s), int(n), int(w)),
            "regenerate": lambda db, spool, w: phase_regenerate(db, Path(spool), int(w)),
            "write": lambda db, spool, fmt, out: phase_write(db, Path(spool), fmt, Path(out)),
            "e2e": lambda db, fmt, out, w: phase_e2e(db, fmt, Path(out), int(w)),
        }
        print(json.dumps(handlers[phase](*rest)))
    else:
        main()
