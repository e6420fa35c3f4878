"""Plots are drawn by the limited plot worker, never in the service process: hostile labels and huge items cannot stall or crash it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from itemsmith.items.schema import Item, Series
from itemsmith.sandbox import render
from itemsmith.sandbox.render import RenderError, render_item_png, shutdown_renderer
from itemsmith.sandbox.settings import RenderLimits

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ITEM = Item(question="Which way?", options=["up", "down"], answer_index=0,
            series=[Series(name="load $\\frac{1}{2}$", values=[1.0, 2.0, 1.5], unit="kW")])
NESTED_MATHTEXT = "$" + "\\frac{" * 300 + "x" + "}{y}" * 300 + "$"
HUGE_ITEM = {"question": "q", "options": ["a", "b"], "answer_index": 0,
             "series": [{"name": NESTED_MATHTEXT, "values": [1.0, 2.0]} for _ in range(320)]}


@pytest.fixture(autouse=True, scope="module")
def _stop_worker_at_the_end() -> Iterator[None]:
    yield
    shutdown_renderer()


def test_worker_draws_the_same_png_as_plot_item() -> None:
    from itemsmith.items.plotting import plot_item

    png = render_item_png(ITEM)
    assert png.startswith(PNG_SIGNATURE)
    assert png == plot_item(ITEM, fmt="png")  # same drawing, done elsewhere
    assert render_item_png(ITEM, dpi=50) == plot_item(ITEM, fmt="png", dpi=50)


def test_the_service_process_never_renders_or_imports_matplotlib() -> None:
    """The review page's and the API's plot paths, in a fresh interpreter: a PNG comes back and
    matplotlib was never imported in that process."""
    program = textwrap.dedent('''
        import sys
        from itemsmith.api.web.samples import Samples, plot_png
        from itemsmith.api.routes import templates
        import itemsmith.verification.students, itemsmith.templates_bank.exporters
        from itemsmith.items.schema import Item
        item = Item.model_validate_json(sys.argv[1])
        png = plot_png(Samples(items=[item]), 0)
        assert png.startswith(b"\\x89PNG"), png[:8]
        print("matplotlib" in sys.modules)
        ''')
    done = subprocess.run([sys.executable, "-c", program, ITEM.model_dump_json()], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_a_huge_item_is_refused_with_a_clear_error() -> None:
    with pytest.raises(RenderError, match="at most 16 series"):
        render_item_png(HUGE_ITEM)
    with pytest.raises(ValueError, match="at most 16 series"):
        Item.model_validate(HUGE_ITEM)


def test_mathtext_labels_are_drawn_as_plain_text_in_the_worker() -> None:
    item = {**HUGE_ITEM, "series": [{"name": NESTED_MATHTEXT[:120], "unit": NESTED_MATHTEXT[:120],
                                     "values": [1.0, 2.0]} for _ in range(2)]}
    assert render_item_png(item).startswith(PNG_SIGNATURE)


def test_wall_clock_limit_kills_the_worker_and_the_next_plot_works() -> None:
    render_item_png(ITEM)
    with pytest.raises(RenderError, match="took longer than"):
        render_item_png(ITEM, limits=RenderLimits(wall_s=0.001))
    assert render_item_png(ITEM).startswith(PNG_SIGNATURE)


def test_a_dead_worker_is_replaced() -> None:
    render_item_png(ITEM)
    worker = render._worker
    assert worker is not None
    worker.process.kill()
    worker.process.wait()
    assert render_item_png(ITEM).startswith(PNG_SIGNATURE)
    assert render._worker is not worker


@pytest.mark.parametrize("bad", [
    {"question": "q", "options": ["a", "b"], "answer_index": 0},
    {"question": "q", "options": ["a", "b"], "answer_index": 0, "series": [{"name": "x", "values": [0.0] * 20_001}]},
    {"question": "q", "options": ["a", "b"], "answer_index": 0, "series": [{"name": "x" * 121, "values": [1.0]}]},
    {"question": "q", "options": ["a", "b"], "answer_index": 0, "series": [{"name": "\x1b[2J", "values": [1.0]}]},
])
def test_items_the_schema_refuses_are_not_drawn(bad: dict) -> None:
    with pytest.raises(RenderError, match="no series|cannot be plotted"):
        render_item_png(bad)


def test_worker_environment_holds_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-travel")
    env = render._worker_env()
    assert "OPENAI_API_KEY" not in env
    assert set(env) <= {*render._ENV_KEEP, "MPLBACKEND", "PYTHONHASHSEED", "TZ", "OMP_NUM_THREADS",
                        "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE"}
