"""Per-run overhead of the isolated sandbox vs an in-process exec of the same template.

    python benchmarks/sandbox_overhead.py [--handler synthetic|FILE.py] [--runs 60] [--gap-ms 0] [--json]

For each template, runs alternate between the isolated executor (a warm `SandboxPool`) and an
in-process run of the same code path (RestrictedPython compile, guarded exec, JSON output)
in this process; overhead = isolated - in-process, paired run by run, reported as p50/p90.
Throughput: the same templates on a pool with 2 workers fed by 2 threads, vs 1 worker.
Numbers depend on the machine and its load (shown); the target is p50 overhead <= 20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from itemsmith.sandbox import SandboxPool
from itemsmith.sandbox.handler_data import HandlerView
from itemsmith.sandbox.runner import run_template_here
from itemsmith.sandbox.settings import SandboxLimits, SandboxSettings

TINY_HANDLER = '''
import numpy as np
import pandas as pd

class Walks:
    name = "walks"
    description = "Eight hourly random walks of 240 samples."

    def records(self):
        return pd.DataFrame({"record_id": [f"w{i}" for i in range(8)], "label": ["up", "down"] * 4})

    def series(self, record_id):
        k = int(record_id[1:])
        rng = np.random.default_rng(k)
        drift = 0.2 if k % 2 == 0 else -0.2
        values = np.cumsum(rng.normal(drift, 1.0, 240))
        return pd.DataFrame({"value": values}, index=pd.date_range("2024-01-01", periods=240, freq="h"))
'''

TEMPLATES = {
    "trivial": '''
def question(num_samples):
    return [tf_item(f"{i} is even", i % 2 == 0) for i in range(num_samples)]
''',
    "typical": '''
def question(num_samples):
    records = handler.records()
    items = []
    for i in range(num_samples):
        rid = records["record_id"].iloc[int(rng.integers(len(records)))]
        frame = handler.series(rid)
        s = frame[frame.columns[0]].astype(float)
        smooth = s.rolling(12, min_periods=1).mean()
        daily = s.groupby(s.index.date).mean() if hasattr(s.index, "date") else s
        slope = np.polyfit(np.arange(len(s)), s.to_numpy(), 1)[0]
        peak = int(np.argmax(np.abs(np.fft.rfft(s.to_numpy() - s.mean()))[1:])) + 1
        label = "rising" if slope > 0 else "falling"
        items.append(mc_item(f"Is record {rid} rising or falling? ({len(daily)} days, peak bin {peak}, "
                             f"last smooth {smooth.iloc[-1]:.2f})", label,
                             ["falling" if label == "rising" else "rising", "flat"],
                             series=[series(s.to_numpy()[:64], name="value")]))
    return items
''',
}


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def load_view(handler: str) -> HandlerView:
    if handler.endswith(".py"):
        from itemsmith.handlers.loader import load_handler_source  # our own benchmark handler

        path = Path(handler)
        return HandlerView(load_handler_source(path.read_text(), data_dir=path.parent, filename=str(path)))
    from itemsmith.handlers.registry import get_builtin

    return HandlerView(get_builtin(handler))


def measure_overhead(pool: SandboxPool, view: HandlerView, source: str, runs: int, samples: int,
                     limits: SandboxLimits, gap_s: float = 0.0) -> dict[str, Any]:
    isolated, inproc = [], []
    for i in range(runs + 5):
        if gap_s:
            time.sleep(gap_s)
        t0 = time.perf_counter()
        result = pool.run(source, num_samples=samples, seed=i)
        t1 = time.perf_counter()
        if not result.ok:
            raise SystemExit(f"isolated run failed: {result.error}")
        text = run_template_here(source, handler=view, num_samples=samples, seed=i, output_bytes=limits.output_bytes,
                                 print_bytes=limits.print_bytes)
        t2 = time.perf_counter()
        if '"status":"ok"' not in text:
            raise SystemExit(f"in-process run failed: {text[:300]}")
        if i >= 5:  # warm-up
            isolated.append((t1 - t0) * 1000)
            inproc.append((t2 - t1) * 1000)
    overhead = [a - b for a, b in zip(isolated, inproc, strict=True)]
    return {
        "isolated_p50_ms": quantile(isolated, 0.5), "isolated_p90_ms": quantile(isolated, 0.9),
        "inprocess_p50_ms": quantile(inproc, 0.5), "inprocess_p90_ms": quantile(inproc, 0.9),
        "overhead_p50_ms": quantile(overhead, 0.5), "overhead_p90_ms": quantile(overhead, 0.9),
        "overhead_mean_ms": statistics.fmean(overhead),
    }


def measure_throughput(pool: SandboxPool, sources: list[str], runs: int, samples: int, threads: int) -> float:
    jobs = [(sources[i % len(sources)], i) for i in range(runs)]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not jobs:
                    return
                source, seed = jobs.pop()
            result = pool.run(source, num_samples=samples, seed=seed)
            if not result.ok:
                raise SystemExit(f"run failed: {result.error}")

    started = time.perf_counter()
    pool_threads = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool_threads:
        t.start()
    for t in pool_threads:
        t.join()
    return runs / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--handler", default=None, help="built-in handler name or handler .py file "
                                                        "(default: a small handler file written to a temp dir)")
    parser.add_argument("--runs", type=int, default=60, help="measured runs per template")
    parser.add_argument("--samples", type=int, default=5, help="num_samples per run")
    parser.add_argument("--throughput-runs", type=int, default=60)
    parser.add_argument("--gap-ms", type=float, default=0.0,
                        help="pause before each isolated run (0: back-to-back, as a busy service sees them)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    handler = args.handler
    if handler is None:
        folder = Path(tempfile.mkdtemp(prefix="itemsmith-bench-"))
        handler = str(folder / "walks.py")
        Path(handler).write_text(TINY_HANDLER)
    limits = SandboxSettings().sandbox
    view = load_view(handler)
    report: dict[str, Any] = {"handler": handler, "runs": args.runs, "samples": args.samples, "gap_ms": args.gap_ms,
                              "cpus": os.cpu_count(), "load_before": os.getloadavg()[0], "templates": {}}
    with SandboxPool(handler, workers=1, limits=limits) as one:
        report["features"] = {k: v for k, v in one.features.items() if k != "warmup"}
        for name, source in TEMPLATES.items():
            report["templates"][name] = measure_overhead(one, view, source, args.runs, args.samples, limits,
                                                         gap_s=args.gap_ms / 1000)
        report["throughput_1_worker_per_s"] = measure_throughput(one, list(TEMPLATES.values()),
                                                                 args.throughput_runs, args.samples, threads=1)
    with SandboxPool(handler, workers=2, limits=limits) as two:
        two.run(TEMPLATES["trivial"], num_samples=1)
        # start the second worker before timing
        warm = [threading.Thread(target=two.run, args=(TEMPLATES["trivial"],), kwargs={"num_samples": 1}) for _ in range(2)]
        for t in warm:
            t.start()
        for t in warm:
            t.join()
        report["throughput_2_workers_per_s"] = measure_throughput(two, list(TEMPLATES.values()),
                                                                  args.throughput_runs, args.samples, threads=2)
    started = time.perf_counter()
    for i in range(args.throughput_runs):
        run_template_here(list(TEMPLATES.values())[i % len(TEMPLATES)], handler=view, num_samples=args.samples, seed=i,
                          output_bytes=limits.output_bytes, print_bytes=limits.print_bytes)
    report["throughput_inprocess_per_s"] = args.throughput_runs / (time.perf_counter() - started)
    report["load_after"] = os.getloadavg()[0]

    if args.json:
        print(json.dumps(report, indent=None, default=float))
        return report
    print(f"handler: {report['handler']}   cpus: {report['cpus']}   load avg: {report['load_before']:.2f} -> "
          f"{report['load_after']:.2f}   gap between runs: {report['gap_ms']:g} ms")
    print(f"isolation: {', '.join(k for k, v in report['features'].items() if v is True)}")
    print(f"{'template':10} {'in-process p50/p90':>20} {'isolated p50/p90':>18} {'overhead p50/p90 (ms)':>24}")
    for name, row in report["templates"].items():
        print(f"{name:10} {row['inprocess_p50_ms']:9.1f} /{row['inprocess_p90_ms']:7.1f}  "
              f"{row['isolated_p50_ms']:8.1f} /{row['isolated_p90_ms']:7.1f}  "
              f"{row['overhead_p50_ms']:12.1f} /{row['overhead_p90_ms']:7.1f}")
    print(f"throughput: in-process {report['throughput_inprocess_per_s']:.1f}/s, 1 worker "
          f"{report['throughput_1_worker_per_s']:.1f}/s, 2 workers {report['throughput_2_workers_per_s']:.1f}/s")
    return report


if __name__ == "__main__":
    main()
