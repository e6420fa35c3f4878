"""Pools and workers: concurrency, recovery, limits, handler errors, result mapping."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import SandboxError, SandboxLimits, SandboxPool, run_template
from itemsmith.sandbox.executor import make_request
from itemsmith.sandbox.results import build_result

SIMPLE = "def question(n):\n    return [tf_item(f'value {rng.integers(1000)}', True) for _ in range(n)]\n"


def test_two_workers_run_concurrently_and_agree(handler_file: Path) -> None:
    with SandboxPool(str(handler_file), workers=2) as two:
        results: list = [None] * 6
        def work(i: int) -> None:
            results[i] = two.run(SIMPLE, num_samples=3, seed=i % 2)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(two.worker_pids()) == 2
    assert all(r.status is RunStatus.ok for r in results), [r.error for r in results]
    assert results[0].items == results[2].items == results[4].items  # same seed on either worker
    assert results[1].items == results[3].items
    assert results[0].items != results[1].items


def test_a_dead_worker_is_replaced(handler_file: Path) -> None:
    with SandboxPool(str(handler_file)) as one:
        (pid,) = one.worker_pids()
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)  # gone for sure (the pool would also notice a half-dead one)
        result = one.run(SIMPLE, num_samples=1)
        assert result.status is RunStatus.ok, result.error
        assert one.worker_pids() != [pid]


def test_per_run_limits(pool) -> None:
    quick = pool.run("def question(n):\n    while True:\n        pass\n", num_samples=1,
                     limits=SandboxLimits(wall_s=0.5))
    assert quick.status is RunStatus.killed and "0.5 s" in quick.error
    assert quick.elapsed_ms < 3000
    small = pool.run("def question(n):\n    return [np.zeros(50 * 10**6).sum()]\n", num_samples=1,
                     limits=SandboxLimits(memory_mb=128))
    assert small.status is RunStatus.killed and "memory" in small.error
    bigger = pool.run("def question(n):\n    x = np.zeros(50 * 10**6)\n    return [tf_item('ok', True)]\n",
                      num_samples=1, limits=SandboxLimits(memory_mb=2048))
    assert bigger.status is RunStatus.ok, bigger.error  # above the spare's limit: a fresh child is forked
    cap = pool.run("def question(n):\n    return [tf_item('x' * 5000, True)]\n", num_samples=1,
                   limits=SandboxLimits(output_bytes=2048))
    assert cap.status is RunStatus.rejected


def test_request_bounds(pool) -> None:
    assert pool.run(SIMPLE, num_samples=0).status is RunStatus.refused
    assert pool.run(SIMPLE, num_samples=10**6).status is RunStatus.refused
    assert pool.run("x = 1\n" * 100000, num_samples=1).status is RunStatus.refused


def test_item_count_and_schema_are_checked(pool) -> None:
    short = pool.run("def question(n):\n    return [tf_item('a', True)]\n", num_samples=3)
    assert short.status is RunStatus.rejected and "expected 3" in short.error
    bad = pool.run("def question(n):\n    return [{'question': 'q', 'options': ['a', 'a'], 'answer_index': 0}]\n",
                   num_samples=1)
    assert bad.status is RunStatus.rejected and "duplicate options" in bad.error
    assert bad.items == [{"question": "q", "options": ["a", "a"], "answer_index": 0}]


def test_unknown_handler_and_broken_handler_file(tmp_path: Path) -> None:
    result = run_template(SIMPLE, "no_such_handler", num_samples=1)
    assert result.status is RunStatus.error and "unknown handler" in result.error
    missing = run_template(SIMPLE, str(tmp_path / "missing.py"), num_samples=1)
    assert missing.status is RunStatus.error and "does not exist" in missing.error
    broken = tmp_path / "broken.py"
    broken.write_text("class H:\n    def records(self):\n        return 1\n    def series(self, r):\n        return 1\n")
    with pytest.raises(SandboxError, match="must return a pandas DataFrame"):
        SandboxPool(str(broken))


def test_handler_file_imports_third_party_packages_and_any_record_ids_reach_templates_as_text_or_int(
        tmp_path: Path) -> None:
    """What README's "Writing a dataset handler" says: an installed package may be imported, an
    instance's description reaches templates, date ids arrive as their text, int ids as ints."""
    folder = tmp_path / "dated"
    folder.mkdir()
    (folder / "dated.py").write_text('''
import datetime as dt
import numpy as np
import pandas as pd
import scipy.signal

class Dated:
    name = "dated"
    def __init__(self):
        self.description = "hourly irradiance (W/m2); a record is one day"
        self.ints = False
    def records(self):
        ids = [1, 2] if self.ints else [dt.date(2024, 1, 1), dt.date(2024, 1, 2)]
        return pd.DataFrame({"record_id": ids})
    def series(self, record_id):
        return pd.DataFrame({"ghi": scipy.signal.detrend(np.arange(24.0)) + 1.0})
''')
    probe = ("def question(n):\n    rid = handler.records()['record_id'].tolist()[1]\n"
             "    values = handler.series(rid)['ghi'].to_numpy()\n"
             "    kind = 'text' if isinstance(rid, str) else 'int' if isinstance(rid, int) else 'other'\n"
             "    return [tf_item(f'{kind} {rid} {len(values)} {handler.description}', True)]\n")
    dated = run_template(probe, str(folder / "dated.py"), num_samples=1)
    assert dated.status is RunStatus.ok, dated.error
    assert dated.items[0]["question"] == "text 2024-01-02 24 hourly irradiance (W/m2); a record is one day"
    (folder / "dated.py").write_text((folder / "dated.py").read_text().replace("self.ints = False", "self.ints = True"))
    numbered = run_template(probe, str(folder / "dated.py"), num_samples=1)
    assert numbered.status is RunStatus.ok and numbered.items[0]["question"].startswith("int 2 24 ")


@pytest.mark.parametrize("folder", ["/", "/tmp", "/root", "/etc"])
def test_handler_files_in_broad_folders_are_refused(folder: str) -> None:
    from itemsmith.sandbox.executor import HandlerSpec, check_handler_folder

    with pytest.raises(SandboxError, match="folder of its own"):
        check_handler_folder(Path(folder))
    if folder == "/tmp":
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".py", dir="/tmp") as fh:
            with pytest.raises(SandboxError, match="folder of its own"):
                HandlerSpec.parse(fh.name)


def test_run_template_reuses_a_pool_and_notices_handler_changes(handler_file: Path, tmp_path: Path) -> None:
    first = run_template(SIMPLE, str(handler_file), num_samples=2, seed=1)
    second = run_template(SIMPLE, str(handler_file), num_samples=2, seed=1)
    assert first.status is RunStatus.ok and first.items == second.items
    copy = tmp_path / "h.py"
    copy.write_text(handler_file.read_text())
    view = "def question(n):\n    return [tf_item(handler.name, True)]\n"
    assert run_template(view, str(copy), num_samples=1).items[0]["question"] == "tiny"
    copy.write_text(handler_file.read_text().replace('name = "tiny"', 'name = "tiny2"'))
    assert run_template(view, str(copy), num_samples=1).items[0]["question"] == "tiny2"


@pytest.mark.parametrize(("outcome", "status", "text"), [
    ({"timed_out": True}, RunStatus.killed, "wall-clock"),
    ({"oversize": True}, RunStatus.rejected, "larger than"),
    ({"signal": signal.SIGSEGV}, RunStatus.error, "crashed the interpreter (SIGSEGV)"),
    ({"signal": signal.SIGXCPU}, RunStatus.killed, "CPU time limit"),
    ({"signal": signal.SIGKILL}, RunStatus.killed, "SIGKILL"),
    ({"signal": signal.SIGXFSZ}, RunStatus.killed, "file size"),
    ({"exit_code": 3}, RunStatus.error, "status 3"),
])
def test_child_outcomes_map_to_statuses(outcome: dict, status: RunStatus, text: str) -> None:
    request = make_request(SIMPLE, num_samples=1, seed=0, limits=SandboxLimits())
    result = build_result({"exit_code": None, "signal": None, "timed_out": False, "oversize": False, **outcome},
                          b"", request, 1.0)
    assert result.status is status and text in result.error


@pytest.mark.parametrize("payload", [b"", b"not json", b'{"status": "ok", "items": "x"}', b'{"status": "pwned"}',
                                     b'{"status": "ok", "items": [], "extra": 1}', b"[" * 10000])
def test_malformed_child_output_is_rejected(payload: bytes) -> None:
    request = make_request(SIMPLE, num_samples=1, seed=0, limits=SandboxLimits())
    outcome = {"exit_code": 0, "signal": None, "timed_out": False, "oversize": False}
    assert build_result(outcome, payload, request, 1.0).status is RunStatus.rejected


def test_ok_envelope_is_validated_again_on_the_host() -> None:
    request = make_request(SIMPLE, num_samples=1, seed=0, limits=SandboxLimits())
    outcome = {"exit_code": 0, "signal": None, "timed_out": False, "oversize": False}
    item = {"question": "q", "options": ["a", "b"], "answer": "b"}
    good = build_result(outcome, json.dumps({"status": "ok", "items": [item]}).encode(), request, 1.0)
    assert good.status is RunStatus.ok and good.items[0]["answer_index"] == 1
    nan = build_result(outcome, b'{"status": "ok", "items": [{"question": NaN}]}', request, 1.0)
    assert nan.status is RunStatus.rejected
