"""Wall time of the release commands as a user runs them (each command a fresh process: sandbox pools
start cold), against a cold `itemsmith --help` measured in the same run.

    python benchmarks/release_speed.py [--samples 2] [--workers 1] [--synthetic 1000] [--plots]
                                       [--baseline COMMIT] [--out FILE] [--keep DIR]

0. Every module of this itemsmith (and of ``--baseline``'s) is compiled to bytecode first, as
   ``pip install`` does: with ``PYTHONDONTWRITEBYTECODE`` set, each process would otherwise compile
   the project from source and every timing would include that.
1. ``startup``: ``python -c "import typer"``, ``itemsmith --help`` and a wrong command line
   (``itemsmith release frobnicate``, exit 2), fresh processes, in interleaved rounds (median).
2. ``curated``: a SQLite bank with every curated template (78 over 7 handlers; ``-n 2``: 156
   items): ``release create``, ``release export`` in each format, ``release verify``; then
   ``create_again``: ``release create`` of the same bank again (every run reused, no sandbox),
   and ``create_after_change``: again after a new version of one template (``CHANGED_TEMPLATE``, on the
   stocks handler: its runs and that one pool only); with ``--plots``, ``export -f jsonl
   --plots`` twice (the first draws the plots, the second reads them from the cache).
3. ``synthetic``: a bank of ``--synthetic`` templates (variants of the curated templates on the
   synthetic handler, each its own version drawing its own items): ``release create`` and
   ``release export`` in each format, to show how the commands scale.
4. ``baseline`` (with ``--baseline COMMIT``): the curated bank released and exported in every
   format by that commit's itemsmith (run from a ``git archive`` of it), then, on a copy of its
   database migrated by this itemsmith: exported again (a release made before items were stored:
   regenerated), ``release verify`` (which stores its items) and exported from the stored items;
   every export's bytes are compared with the baseline's. With ``--plots`` too, ``jsonl`` and ``hf``
   with plots: drawn by the baseline, read from the cache it filled by this itemsmith, compared.

Each command records its wall time, the CPU time of its process and the children it waited for
(``cpu_s``: what the command itself costs, much less sensitive than wall time to other work on the
machine), the 1-minute load average before it starts, and both as ratios to the median ``--help``
(``times_help``, ``cpu_times_help``); ``targets`` says which targets each measure met. ``curated`` and ``synthetic`` also time, inside one process whose imports are done,
reading the release and its items and writing each format (``in_process``): the commands' own
work, apart from starting the interpreter. Prints one JSON object (and writes it to ``--out``).

    python benchmarks/release_speed.py --in-process DATA_DIR BANK   # that part alone, on a kept bank
"""

from __future__ import annotations

import argparse
import compileall
import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("jsonl", "hf", "lm-eval", "inspect")
PLOT_FORMATS = ("jsonl", "hf")  # the formats that carry plots
ITEMSMITH = str(Path(sys.executable).with_name("itemsmith"))  # the console script a user runs
SYNTHETIC_BANK = """
import sys
from itemsmith.templates_bank.curated import load_curated
from itemsmith.templates_bank.storage import (BankCreate, ReviewCreate, add_template_version, create_bank,
                                              open_session, record_review, upgrade)
count = int(sys.argv[1])
upgrade()
bases = [t for t in load_curated().values() if (t.handler or "synthetic") == "synthetic"]
with open_session() as session:
    bank = create_bank(session, BankCreate(name="synthetic", handler="synthetic", owner="bench"))
    for i in range(count):
        base = bases[i % len(bases)]
        # variant i draws other numbers: its generator first skips i // len(bases) of them
        source = (base.source.replace("def question(", "def base_question(", 1)
                  + f"\\n\\ndef question(num_samples):\\n    rng.random({i // len(bases)})\\n"
                  + "    return base_question(num_samples)\\n")
        template = base.model_copy(update={"id": f"{base.id}_{i}", "source": source})
        version = add_template_version(session, bank.id, template, created_by="bench")
        record_review(session, version.id, ReviewCreate(decision="approve", reviewer="bench"))
"""


CHANGE_ONE_TEMPLATE = """
import sys
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.storage import (ReviewCreate, add_template_version, get_bank, open_session,
                                              record_review)
template = get_curated(sys.argv[1])
with open_session() as session:
    bank = get_bank(session, "curated")
    changed = template.model_copy(update={"source": template.source + "\\n# edited\\n"})
    version = add_template_version(session, bank.id, changed, created_by="bench")
    record_review(session, version.id, ReviewCreate(decision="approve", reviewer="bench"))
"""
CHANGED_TEMPLATE = "stocks_largest_drawdown"

WRONG_COMMAND_LINE = ("release", "frobnicate")  # exit 2: no such command


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(env: dict[str, str], command: list[str], code: int = 0) -> dict[str, float]:
    load = os.getloadavg()[0]
    cpu = _cpu_of_children()
    started = time.monotonic()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - started
    if done.returncode != code:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}, not {code}:\n{done.stderr[-3000:]}")
    return {"s": round(seconds, 3), "cpu_s": round(_cpu_of_children() - cpu, 3), "load_before": round(load, 2)}


def compile_tree(folder: Path) -> None:
    """Bytecode for every module under `folder` (what pip writes when it installs a wheel)."""
    for package in sorted(p.parent for p in folder.glob("*/__init__.py")):
        compileall.compile_dir(package, quiet=1)


def _itemsmith(env: dict[str, str], *args: str) -> dict[str, float]:
    return _run(env, [ITEMSMITH, *args])


def _env(data: Path, code: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "ITEMSMITH_DATA_DIR": str(data)}
    env.pop("ITEMSMITH_DATABASE_URL", None)
    if code is not None:  # another itemsmith: its tree comes before this installation's
        env["PYTHONPATH"] = str(code)
    return env


STARTUP = {"import_typer": [sys.executable, "-c", "import typer"], "itemsmith_help": [ITEMSMITH, "--help"],
           "itemsmith_wrong": [ITEMSMITH, *WRONG_COMMAND_LINE]}


def startup(repeats: int) -> dict[str, Any]:
    """The three start-up cases, round after round (a change of load hits them alike)."""
    env = _env(Path(tempfile.gettempdir()))
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in STARTUP}
    for _ in range(repeats):
        for name, command in STARTUP.items():
            runs[name].append(_run(env, command, code=2 if name == "itemsmith_wrong" else 0))
    out: dict[str, Any] = {}
    for name, measured in runs.items():
        out[f"{name}_s"] = [m["s"] for m in measured]
        out[f"{name}_median_s"] = statistics.median(m["s"] for m in measured)
        out[f"{name}_median_cpu_s"] = statistics.median(m["cpu_s"] for m in measured)
    for name in ("itemsmith_help", "itemsmith_wrong"):
        out[f"{name}_vs_typer"] = round(out[f"{name}_median_s"] / out["import_typer_median_s"], 2)
    return out


def _exports(env: dict[str, str], ref: str, out: Path, workers: int) -> dict[str, dict[str, float]]:
    return {fmt: _itemsmith(env, "release", "export", ref, "-f", fmt, "-o", str(out / fmt), "--workers", str(workers))
            for fmt in FORMATS}


def curated(folder: Path, samples: int, workers: int, plots: bool, code: Path | None = None) -> dict[str, Any]:
    env = _env(folder / "data", code)
    _itemsmith(env, "bank", "create", "curated", "--handler", "synthetic", "--owner", "bench")
    _itemsmith(env, "bank", "import-curated", "curated", "--reviewer", "bench")
    result: dict[str, Any] = {"create": _itemsmith(env, "release", "create", "curated", "--by", "bench", "-n",
                                                   str(samples), "--workers", str(workers))}
    result["export"] = _exports(env, "curated@1", folder / "out", workers)
    result["items"] = sum(1 for _ in (folder / "out" / "jsonl" / "data.jsonl").open())
    if code is None:
        result["in_process"] = _in_process(folder / "data", "curated")
        result["verify"] = _itemsmith(env, "release", "verify", "curated@1", "--workers", str(workers))
        create = ["release", "create", "curated", "--by", "bench", "-n", str(samples), "--workers", str(workers)]
        result["create_again"] = _itemsmith(env, *create)
        subprocess.run([sys.executable, "-c", CHANGE_ONE_TEMPLATE, CHANGED_TEMPLATE], env=env, check=True)
        result["create_after_change"] = {"template": CHANGED_TEMPLATE, **_itemsmith(env, *create)}
    if plots:
        result["export_jsonl_plots"] = [_itemsmith(env, "release", "export", "curated@1", "-f", "jsonl", "--plots",
                                                   "-o", str(folder / f"plots-{i}")) for i in (1, 2)]
    return result


def synthetic(folder: Path, templates: int, samples: int, workers: int) -> dict[str, Any]:
    env = _env(folder / "data")
    subprocess.run([sys.executable, "-c", SYNTHETIC_BANK, str(templates)], env=env, check=True)
    result: dict[str, Any] = {"templates": templates, "create": _itemsmith(
        env, "release", "create", "synthetic", "--by", "bench", "-n", str(samples), "--workers", str(workers))}
    result["export"] = _exports(env, "synthetic@1", folder / "out", workers)
    result["items"] = sum(1 for _ in (folder / "out" / "jsonl" / "data.jsonl").open())
    result["in_process"] = _in_process(folder / "data", "synthetic")
    return result


def in_process(data: Path, bank: str) -> dict[str, Any]:
    """Seconds of `get_release`, reading and checking its stored items, and `export_release` in each
    format, in a process that has imported them already."""
    from itemsmith.templates_bank.exporters import export_release
    from itemsmith.templates_bank.releases import get_release
    from itemsmith.templates_bank.storage import open_session

    url = f"sqlite:///{data / 'itemsmith.sqlite'}"
    started = time.monotonic()
    with open_session(url) as session:
        release = get_release(session, bank, 1)
    read = time.monotonic()
    items = sum(len(run.items) for _, run in release.items())
    result: dict[str, Any] = {"load_before": round(os.getloadavg()[0], 2), "items": items,
                              "get_release_s": round(read - started, 2),
                              "read_items_s": round(time.monotonic() - read, 2), "export_s": {}}
    with tempfile.TemporaryDirectory() as out:
        for fmt in FORMATS:
            started = time.monotonic()
            export_release(release, fmt, Path(out) / fmt)
            result["export_s"][fmt] = round(time.monotonic() - started, 2)
    return result


def _in_process(data: Path, bank: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--in-process", str(data), bank], env=_env(data), check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def _code_tree(commit: str, folder: Path) -> Path:
    """``commit``'s itemsmith laid out as the wheel installs it (setup.py maps the top-level folders to
    itemsmith.*), importable from the returned folder."""
    source, tree = folder / "source", folder / "tree"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    archive_path = folder / "source.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(source, filter="data")
    (tree / "itemsmith").mkdir(parents=True)
    for module in (source / "itemsmith").glob("*.py"):
        (tree / "itemsmith" / module.name).symlink_to(module)
    setup = (source / "setup.py").read_text()
    line = next(line for line in setup.splitlines() if line.startswith("SUBPACKAGES"))
    for top in eval(line.split("=", 1)[1]):  # noqa: S307 - a literal list in our own setup.py
        (tree / "itemsmith" / top).symlink_to(source / top)
    return tree


def _same_bytes(one: Path, other: Path) -> bool:
    names = sorted(str(p.relative_to(one)) for p in one.rglob("*") if p.is_file())
    if names != sorted(str(p.relative_to(other)) for p in other.rglob("*") if p.is_file()):
        return False
    _, mismatch, errors = filecmp.cmpfiles(one, other, names, shallow=False)
    return not mismatch and not errors


def _plot_exports(env: dict[str, str], out: Path) -> dict[str, dict[str, float]]:
    return {fmt: _itemsmith(env, "release", "export", "curated@1", "-f", fmt, "--plots", "-o", str(out / fmt))
            for fmt in PLOT_FORMATS}


def baseline(folder: Path, commit: str, samples: int, workers: int, plots: bool) -> dict[str, Any]:
    code = _code_tree(commit, folder / "code")
    compile_tree(folder / "code" / "source")
    before = curated(folder / "before", samples, workers, plots=False, code=code)
    if plots:  # drawn by the baseline, into the database copied below
        before["export_plots"] = _plot_exports(_env(folder / "before" / "data", code), folder / "before" / "plots")
    after = folder / "after"
    shutil.copytree(folder / "before" / "data", after / "data")
    env = _env(after / "data")
    regenerated = _exports(env, "curated@1", after / "regenerated", workers)
    verify = _itemsmith(env, "release", "verify", "curated@1", "--workers", str(workers))
    stored = _exports(env, "curated@1", after / "stored", workers)
    identical = {f"{how} {fmt}": _same_bytes(folder / "before" / "out" / fmt, after / how / fmt)
                 for how in ("regenerated", "stored") for fmt in FORMATS}
    result = {"commit": commit, "before": before, "after_regenerated_export": regenerated, "after_verify": verify,
              "after_stored_export": stored, "bytes_identical_to_before": identical}
    if plots:
        result["after_plots_export"] = _plot_exports(env, after / "plots")
        identical.update({f"plots {fmt}": _same_bytes(folder / "before" / "plots" / fmt, after / "plots" / fmt)
                          for fmt in PLOT_FORMATS})
    return result


def _ratios(report: dict[str, Any], help_s: float, measure: str = "s") -> dict[str, float]:
    """Each timed command (a dict with "s") as a multiple of the median --help (its `measure`)."""
    out: dict[str, float] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and "s" in value and "load_before" in value:
            out[prefix] = round(value[measure] / help_s, 1)
        elif isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix} {key}".strip(), inner)
        elif isinstance(value, list):
            for i, inner in enumerate(value, 1):
                walk(f"{prefix} #{i}", inner)

    walk("", {k: v for k, v in report.items() if not k.startswith("startup")})
    return out


def targets(report: dict[str, Any]) -> dict[str, bool]:
    """Which targets were met: the curated bank's create and each export within 5x --help (wall and
    CPU), a second create of the same bank too, --help and a wrong command line within 2x the Typer
    import, exports byte-identical."""
    met: dict[str, bool] = {}
    for ratios in ("times_help", "cpu_times_help"):
        curated = {k: v for k, v in report[ratios].items() if k.startswith(("curated create ", "curated export "))
                   or k == "curated create"}
        met[f"curated create and export <= 5x --help ({ratios})"] = all(v <= 5 for v in curated.values())
        if "curated create_again" in report[ratios]:
            met[f"curated second create <= 5x --help ({ratios})"] = report[ratios]["curated create_again"] <= 5
    for case in ("itemsmith_help", "itemsmith_wrong"):
        met[f"{case} <= 2x import typer"] = all(b[f"{case}_vs_typer"] <= 2
                                               for b in (report["startup"], report["startup_again"]))
    if "baseline" in report:
        met["exports byte-identical to the baseline's"] = all(report["baseline"]["bytes_identical_to_before"].values())
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--synthetic", type=int, default=1000, help="templates of the synthetic bank (0: skip)")
    parser.add_argument("--synthetic-samples", type=int, default=2)
    parser.add_argument("--plots", action="store_true", help="also export the curated bank with plots, twice")
    parser.add_argument("--baseline", default=None, help="a commit to compare create, export and export bytes with")
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes for each startup measurement")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON report to this file")
    parser.add_argument("--keep", type=Path, default=None, help="keep the data folders here")
    parser.add_argument("--in-process", nargs=2, metavar=("DATA_DIR", "BANK"), default=None,
                        help="only time the in-process part on a kept bank")
    args = parser.parse_args()
    if args.in_process is not None:
        print(json.dumps(in_process(Path(args.in_process[0]), args.in_process[1])))
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="itemsmith-release-speed-"))
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_at_start": os.getloadavg(),
                              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "samples": args.samples, "workers": args.workers}
    compile_tree(ROOT)
    try:
        report["startup"] = startup(args.repeats)
        report["curated"] = curated(folder / "curated", args.samples, args.workers, args.plots)
        if args.synthetic:
            report["synthetic"] = synthetic(folder / "synthetic", args.synthetic, args.synthetic_samples, args.workers)
        if args.baseline:
            report["baseline"] = baseline(folder / "baseline", args.baseline, args.samples, args.workers,
                                          args.plots)
        report["startup_again"] = startup(args.repeats)  # the load may have changed meanwhile
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    report["load_at_end"] = os.getloadavg()
    both = (report["startup"], report["startup_again"])
    help_s = statistics.median([*both[0]["itemsmith_help_s"], *both[1]["itemsmith_help_s"]])
    report["times_help"] = _ratios(report, help_s)
    report["cpu_times_help"] = _ratios(report, statistics.median(b["itemsmith_help_median_cpu_s"] for b in both),
                                       measure="cpu_s")
    report["targets"] = targets(report)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
