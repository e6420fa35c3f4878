"""Plots: valid PNG/SVG, expected pixel size, byte-identical across calls."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import matplotlib.image as mpimg
import pytest

from itemsmith.items.plotting import plot_item, plot_series
from itemsmith.items.schema import Item, Series

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DATES = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
SERIES = Series(name="load", values=[1.0, 2.5, 2.5, 0.75], timestamps=DATES, unit="kW")


def _shape(png: bytes) -> tuple[int, int]:
    image = mpimg.imread(io.BytesIO(png), format="png")
    return image.shape[0], image.shape[1]


def test_png_signature_and_size() -> None:
    png = plot_series([SERIES], "png", dpi=100, width=6.0, height=2.0)
    assert png.startswith(PNG_SIGNATURE)
    assert _shape(png) == (200, 600)


def test_png_size_follows_dpi() -> None:
    png = plot_series([SERIES], dpi=50, width=4.0, height=3.0)
    assert _shape(png) == (150, 200)


def test_svg_parses_as_xml() -> None:
    svg = plot_series([SERIES], "svg")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert b"<dc:date>" not in svg


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_deterministic(fmt: str) -> None:
    channels = [SERIES, Series(name="noise", values=[float(i % 7) for i in range(50)])]
    assert plot_series(channels, fmt) == plot_series(channels, fmt)


def test_png_has_no_software_metadata() -> None:
    assert b"matplotlib" not in plot_series([SERIES]).lower()


def test_several_aligned_channels_stack() -> None:
    other = Series(name="temp", values=[3.0, 2.0, 1.0, 0.0], timestamps=DATES, unit="°C")
    png = plot_series([SERIES, other], dpi=80, width=5.0, height=2.0)
    assert _shape(png) == (320, 400)


def test_channels_of_different_lengths_one_panel_each() -> None:
    other = Series(name="long", values=[float(i) for i in range(200)])
    png = plot_series([SERIES, other, Series(values=[1.0])], dpi=50, width=6.0, height=2.0)
    assert _shape(png) == (300, 300)


def test_single_series_accepted() -> None:
    assert plot_series(SERIES) == plot_series([SERIES])


def test_plot_item() -> None:
    item = Item(question="Trend?", options=["up", "down"], answer_index=1, series=[SERIES])
    png = plot_item(item, dpi=40)
    assert png.startswith(PNG_SIGNATURE)
    assert png == plot_series([SERIES], dpi=40)
    ET.fromstring(plot_item(item, "svg"))


def test_errors() -> None:
    with pytest.raises(ValueError, match="no series"):
        plot_series([])
    with pytest.raises(ValueError, match="valid formats"):
        plot_series([SERIES], "jpg")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no series"):
        plot_item(Item(question="Q", options=["a", "b"], answer_index=0))


# --- hostile labels -----------------------------------------------------------------------------

NESTED_MATHTEXT = "$" + "\\frac{" * 300 + "x" + "}{y}" * 300 + "$"


def test_labels_are_plain_text_mathtext_is_never_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.mathtext

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("mathtext was parsed")

    monkeypatch.setattr(matplotlib.mathtext.MathTextParser, "parse", refuse)
    channels = [Series(name=NESTED_MATHTEXT[:120], unit="$\\sqrt{x}$", values=[1.0, 2.0],
                       timestamps=["$a$", "$b^{c}$"]) for _ in range(3)]
    assert plot_series(channels).startswith(PNG_SIGNATURE)
    assert plot_series(channels, "svg").startswith(b"<?xml")


def test_a_320_channel_mathtext_item_is_refused_by_the_schema() -> None:
    raw = {"question": "q", "options": ["a", "b"], "answer_index": 0,
           "series": [{"name": NESTED_MATHTEXT, "values": [1.0]} for _ in range(320)]}
    with pytest.raises(ValueError, match="at most 16 series"):
        Item.model_validate(raw)
    with pytest.raises(ValueError, match="at most 16 series"):
        plot_series([Series(values=[1.0])] * 17)


@pytest.mark.parametrize("raw_series", [
    {"name": NESTED_MATHTEXT, "values": [1.0]},
    {"name": "x", "unit": "u" * 121, "values": [1.0]},
    {"name": "x", "values": [1.0] * 20_001},
    {"name": "x", "values": [1.0], "timestamps": ["t" * 41]},
])
def test_schema_caps_labels_and_points(raw_series: dict) -> None:
    with pytest.raises(ValueError):
        Series.model_validate(raw_series)


def test_schema_caps_points_per_item() -> None:
    with pytest.raises(ValueError, match="at most 100000"):
        Item.model_validate({"question": "q", "options": ["a", "b"], "answer_index": 0,
                             "series": [{"name": f"c{i}", "values": [1.0] * 20_000} for i in range(6)]})
