"""Progress of the long release commands (`cli._common.progress_shown`): a rich.progress bar on a
terminal, plain "what: done/total" lines in a log or a pipe (without importing rich), nothing under
``--json``."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

from rich.console import Console

from itemsmith.cli._common import progress_shown


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=100, color_system=None), out


def test_a_log_gets_a_line_about_every_tenth_of_the_way_and_at_the_end() -> None:
    console, out = _console(terminal=False)
    with progress_shown("exported items", console=console) as shown:
        assert shown is not None
        for done in range(1, 26):
            shown(done, 25)
    lines = out.getvalue().splitlines()
    assert lines == [f"exported items: {done}/25" for done in (1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 25)]


def test_a_terminal_gets_a_bar_that_ends_at_the_total_and_no_lines() -> None:
    console, out = _console(terminal=True)
    with progress_shown("answered", console=console) as shown:
        assert shown is not None
        for done in range(1, 8):
            shown(done, 7)
    text = out.getvalue()
    assert "answered" in text and "7/7" in text
    assert "answered: " not in text  # not the log's lines
    assert "━" in text  # rich's bar


def test_json_output_shows_no_progress() -> None:
    console, out = _console(terminal=True)
    with progress_shown("answered", enabled=False, console=console) as shown:
        assert shown is None
    assert out.getvalue() == ""


def test_a_pipe_gets_the_lines_without_rich() -> None:
    probe = textwrap.dedent("""
        import sys
        from itemsmith.cli._common import progress_shown
        with progress_shown("stored items") as shown:
            for done in range(1, 4):
                shown(done, 3)
        print("rich" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stderr.splitlines() == [f"stored items: {n}/3" for n in (1, 2, 3)]
    assert done.stdout.strip() == "False"
