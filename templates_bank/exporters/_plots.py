"""Item plots for exports, drawn once: a plot is cached in the bank by the item's hash, the dpi and
the renderer (`renderer_id`: matplotlib's version and the plotting code), so exporting a release
with plots again, in another format or another release holding the same item, reads the PNG
instead of drawing it. A release made before items were stored has no bank connection to cache
in: its plots are drawn every time, as before. The plot worker (`sandbox.render`) is imported when
a plot is drawn: an export without plots, or one that finds them all cached, never loads the sandbox."""

from __future__ import annotations

from functools import cache
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

from itemsmith.items.hashing import sha256_hex
from itemsmith.items.schema import Item
from itemsmith.templates_bank.releases import Release, item_body
from itemsmith.templates_bank.storage import cached_plot, store_plot

__all__ = ["ItemPlots", "renderer_id"]

_PLOTTING_CODE = ("itemsmith.items.plotting", "itemsmith.sandbox.render_worker")


@cache
def renderer_id() -> str:
    """sha256 of what a plot's bytes depend on besides the item and dpi: matplotlib's version and the
    plotting code (read, not imported: the service never imports matplotlib)."""
    parts = [f"matplotlib {metadata.version('matplotlib')}"]
    for module in _PLOTTING_CODE:
        spec = find_spec(module)
        assert spec is not None and spec.origin is not None, module
        parts.append(Path(spec.origin).read_text(encoding="utf-8"))
    return sha256_hex("\n".join(parts))


def render_item_png(item: Item, dpi: int) -> bytes:
    """`sandbox.render.render_item_png`, imported with the sandbox on the first plot drawn."""
    from itemsmith.sandbox.render import render_item_png as draw

    return draw(item, dpi=dpi)


class ItemPlots:
    """The PNG plot of each item of a release at one dpi, read from the cache or drawn (in the
    limited plot worker, `sandbox.render`) and cached."""

    def __init__(self, release: Release, dpi: int) -> None:
        self.engine = release.stored.engine if release.stored is not None else None
        self.dpi = dpi

    def png(self, item: Item) -> bytes:
        if self.engine is None:
            return render_item_png(item, dpi=self.dpi)
        key = sha256_hex(item_body(item))
        png = cached_plot(self.engine, key, self.dpi, renderer_id())
        if png is None:
            png = render_item_png(item, dpi=self.dpi)
            store_plot(self.engine, key, self.dpi, renderer_id(), png)
        return png
