"""Plot an item's series as PNG or SVG bytes, for vision models and the review page.

Uses `matplotlib.figure.Figure` with the Agg canvas directly, never pyplot, so no
figure or state outlives a call. Output is deterministic: the same input gives
byte-identical bytes (no timestamps or software versions in the metadata, a fixed
SVG id salt).

Text from the item (channel names, units, timestamps) is drawn as plain text: mathtext and
LaTeX are off, so ``$...$`` is shown as typed. The item schema caps what there is to draw
(channels, points, label lengths). Template output is hostile: the service renders plots
through `itemsmith.sandbox.render` (a limited worker process), never in its own process.

Layout: one panel per channel, stacked. Channels that share a time axis (same
length and the same timestamps, see `rendering.group_aligned`) share x; otherwise
each panel has its own. The channel name is the panel title, the unit the y label;
the x axis shows the timestamps (at most `max_xticks` of them) or the sample index.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Literal

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from itemsmith.items.rendering import group_aligned
from itemsmith.items.schema import MAX_CHANNELS, Item, Series

__all__ = ["ImageFormat", "plot_item", "plot_series"]

ImageFormat = Literal["png", "svg"]

_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
}

_STYLE = {
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "svg.hashsalt": "itemsmith",  # fixed ids in SVG output (else a fresh uuid per save)
    "svg.fonttype": "path",
    "path.simplify": True,
    # Labels come from template output: plain text, never mathtext or LaTeX ("$\\frac{..}$"
    # nested 300 deep took minutes and raised RecursionError when parsed).
    "text.parse_math": False,
    "text.usetex": False,
}


def _timestamp_ticks(n: int, max_ticks: int) -> list[int]:
    """At most `max_ticks` evenly spread positions in 0..n-1, first and last included."""
    if n <= max_ticks:
        return list(range(n))
    return sorted({int(round(p)) for p in np.linspace(0, n - 1, max_ticks)})


def plot_series(series: Series | Sequence[Series], fmt: ImageFormat = "png", dpi: int = 100,
                width: float = 6.0, height: float = 2.0, max_xticks: int = 6) -> bytes:
    """Plot channels as stacked panels and return the encoded image.

    ``width`` is the figure width in inches, ``height`` the height of one panel, so a
    PNG is ``round(width * dpi)`` by ``round(height * dpi * panels)`` pixels. Raises
    ValueError for no channels, an unknown ``fmt`` or non-positive sizes.
    """
    channels = [series] if isinstance(series, Series) else list(series)
    if not channels:
        raise ValueError("nothing to plot: no series given")
    if len(channels) > MAX_CHANNELS:
        raise ValueError(f"at most {MAX_CHANNELS} series can be plotted, got {len(channels)}")
    if fmt not in _METADATA:
        raise ValueError(f"unknown image format {fmt!r}; valid formats: {', '.join(_METADATA)}")
    if dpi <= 0 or width <= 0 or height <= 0 or max_xticks < 2:
        raise ValueError("dpi, width and height must be positive and max_xticks at least 2")

    shared = len(group_aligned(channels)) == 1
    with mpl.rc_context(_STYLE):
        fig = Figure(figsize=(width, height * len(channels)), dpi=dpi, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(len(channels), 1, sharex=shared, squeeze=False)[:, 0]
        for i, (ax, s) in enumerate(zip(axes, channels)):
            x = np.arange(len(s.values))
            ax.plot(x, s.values, color="C0", marker="o" if len(x) <= 30 else None, markersize=2.5)
            derived = s.derived.strip() if s.derived else ""
            ax.set_title(f"{s.name} ({derived})" if derived else s.name, loc="left")
            if s.unit:
                ax.set_ylabel(s.unit)
            bottom = not shared or i == len(channels) - 1
            if s.timestamps is not None:
                ticks = _timestamp_ticks(len(x), max_xticks)
                ax.set_xticks(ticks, [s.timestamps[t] for t in ticks])
                if bottom:
                    for label in ax.get_xticklabels():
                        label.set_rotation(30)
                        label.set_horizontalalignment("right")
            else:
                ax.xaxis.set_major_locator(MaxNLocator(nbins=max_xticks, integer=True))
                if bottom:
                    ax.set_xlabel("sample index")
            if len(x) == 1:
                ax.set_xlim(-0.5, 0.5)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
    return buf.getvalue()


def plot_item(item: Item, fmt: ImageFormat = "png", dpi: int = 100, width: float = 6.0,
              height: float = 2.0, max_xticks: int = 6) -> bytes:
    """Plot an item's series (see `plot_series`); ValueError if the item has none."""
    if not item.series:
        raise ValueError("the item has no series to plot")
    return plot_series(item.series, fmt=fmt, dpi=dpi, width=width, height=height, max_xticks=max_xticks)
