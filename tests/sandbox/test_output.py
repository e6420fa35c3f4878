"""Strict JSON output: lone surrogates, huge integers and control
characters get a clear refusal, in the child and again on the host; free text the sandbox
reports (errors, printed output) is cleaned; what the CLI prints is terminal-safe."""

from __future__ import annotations

import json
import re
import textwrap

import numpy as np
import pytest

from itemsmith.items.rendering import terminal_safe
from itemsmith.items.schema import Item, RunStatus
from itemsmith.sandbox import proxies
from itemsmith.sandbox.handler_data import HandlerView
from itemsmith.sandbox.models import RunRequest
from itemsmith.sandbox.output import OutputError, clean_text, parse_plain_json, to_plain_json
from itemsmith.sandbox.results import build_result
from itemsmith.sandbox.runner import run_template_here

from .test_policy import TinySource


def run_here(source: str) -> dict:
    text = run_template_here(textwrap.dedent(source), handler=HandlerView(TinySource()), num_samples=1, seed=0,
                             output_bytes=1 << 20, print_bytes=4096, synth=proxies.synth_proxy())
    text.encode("utf-8")  # the envelope itself is always valid UTF-8
    return json.loads(text)


@pytest.mark.parametrize(("value", "message"), [
    ({"question": "a\ud800b"}, "lone surrogate U+D800"),
    ({"question": "ok \x1b[32mPASS\x1b[0m"}, "control character U+001B"),
    ({"options": ["a", "\x9b31m"]}, "control character U+009B"),
    ({"metadata": {"k": "\x00"}}, "control character U+0000"),
    ({"meta\x07data": 1}, "key that contains the control character U+0007"),
    ({"n": 2**63}, "outside the signed 64-bit range"),
    ({"n": -(2**63) - 1}, "outside the signed 64-bit range"),
    ({"n": 10**5000}, "outside the signed 64-bit range"),
    ({"n": np.uint64(2**64 - 1)}, "outside the signed 64-bit range"),
])
def test_child_conversion_refuses_with_a_clear_message(value: object, message: str) -> None:
    with pytest.raises(OutputError, match=re.escape(message)):
        to_plain_json([value], 1 << 20)


def test_child_conversion_keeps_ordinary_text_and_int64_bounds() -> None:
    value = [{"question": "Line 1\n\tLine 2\r\n é ✓ 🙂 $x$", "n": 2**63 - 1, "m": -(2**63)}]
    assert json.loads(to_plain_json(value, 1 << 20)) == value


@pytest.mark.parametrize(("raw", "message"), [
    (b'{"a": "\\ud800"}', "lone surrogate"),
    (b'{"a": "\\u001b[2J"}', "control character U+001B"),
    (b'{"\\u009b": 1}', "key that contains"),
    (b'{"a": 9223372036854775808}', "64-bit"),
    (b'{"a": ' + b"9" * 5000 + b"}", "64-bit"),
])
def test_host_parse_refuses(raw: bytes, message: str) -> None:
    with pytest.raises(OutputError, match=re.escape(message)):
        parse_plain_json(raw, 1 << 20)


def test_lone_surrogate_item_is_rejected_not_an_internal_error() -> None:
    result = run_here('''
        def question(n):
            return [{"question": "bad \\ud800 text", "options": ["a", "b"], "answer_index": 0}]
        ''')
    assert result["status"] == "rejected"
    assert "lone surrogate U+D800" in result["error"]


def test_error_and_printed_text_are_cleaned() -> None:
    result = run_here('''
        def question(n):
            print("\\x1b[2J cleared \\ud800")
            raise ValueError("\\x1b[32mok\\x1b[0m")
        ''')
    assert result["status"] == "error"
    for text in (result["error"], result["printed"]):
        assert "\x1b" not in text and "\ud800" not in text
    assert "\ufffd[32mok" in result["error"]


def test_a_forged_envelope_with_escape_sequences_is_rejected_on_the_host() -> None:
    request = RunRequest(source="", num_samples=1, seed=0, wall_seconds=1, cpu_seconds=1, memory_bytes=1 << 26,
                         output_bytes=1 << 20, print_bytes=1024, max_open_files=16, max_processes=1)
    payload = json.dumps({"status": "error", "error": "\x1b[32mok\x1b[0m", "printed": ""}).encode()
    result = build_result({"exit_code": 0}, payload, request, 1.0)
    assert result.status is RunStatus.rejected
    assert "control character" in result.error


def test_isolated_run_reports_a_lone_surrogate_clearly(pool) -> None:
    result = pool.run('def question(n):\n    return [{"question": "\\udc80", "options": ["a", "b"], "answer_index": 0}]\n',
                      num_samples=1, seed=0)
    assert result.status is RunStatus.rejected
    assert "lone surrogate" in result.error


@pytest.mark.parametrize("field", ["question", "context", "rationale"])
def test_item_schema_refuses_control_characters_in_text_fields(field: str) -> None:
    raw = {"question": "q", "options": ["a", "b"], "answer_index": 0, field: "x\x1b]0;title\x07"}
    with pytest.raises(ValueError, match="U\\+001B"):
        Item.model_validate(raw)


def test_clean_text_and_terminal_safe() -> None:
    assert clean_text("a\x1bb\nc\td\ud800") == "a\ufffdb\nc\td\ufffd"
    shown = terminal_safe("ok\x1b[32m PASS\r\u202eevil\x9b\nnext\tcol é")
    assert shown == "ok\\x1b[32m PASS\\r\\u202eevil\\x9b\nnext\tcol é"
    assert not any(ch in shown for ch in "\x1b\r\u202e\x9b")


def test_cli_prints_error_text_terminal_safe(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from itemsmith.cli.app import app
    from itemsmith.items.schema import StructureReport
    from itemsmith.verification import structure

    painted = "\x1b[1A\x1b[2K\x1b[32mok: 5 items\x1b[0m\r\u202e"
    monkeypatch.setattr(structure, "check_structure",
                        lambda *a, **k: StructureReport(status=RunStatus.error, error=painted))
    template = tmp_path / "t.py"
    template.write_text("def question(n):\n    return []\n")
    result = CliRunner().invoke(app, ["check-template", str(template), "--handler", "synthetic"])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\r" not in result.output and "\u202e" not in result.output
    assert "\\x1b[32mok: 5 items" in result.output
