"""Sample items of a template version for the review page, run in the sandbox (never in this
process) by the app's `TemplateSampler` (cached per version and seed, fair between owners), so
the page and its plot requests share one sandbox run. Their plots are drawn by the limited plot
worker (`sandbox.render`), never in this process either."""

from __future__ import annotations

from pydantic import BaseModel

from itemsmith.items.schema import Item
from itemsmith.items.static import StaticSourceError, parse_static_source
from itemsmith.sandbox.render import RenderError, render_item_png
from itemsmith.service.sampling import TemplateSampler
from itemsmith.templates_bank.handler_identity import is_static_handler, redact_handler_paths
from itemsmith.templates_bank.storage import TemplateVersionPublic

__all__ = ["SAMPLE_COUNT", "SAMPLE_SEED", "RenderError", "Samples", "plot_png", "sample_items"]

SAMPLE_COUNT = 3
SAMPLE_SEED = 0


class Samples(BaseModel):
    """A run's items, or why there are none (the sandbox's one-line error)."""

    items: list[Item] = []
    error: str | None = None


def sample_items(sampler: TemplateSampler, owner: str, version: TemplateVersionPublic, handler: str) -> Samples:
    """`SAMPLE_COUNT` items of the version on seed `SAMPLE_SEED` with the given handler
    (`SamplerBusy` when the owner has too much sandbox work queued); imported items are read from
    the version's source (JSON, never run)."""
    if is_static_handler(handler):
        try:
            return Samples(items=parse_static_source(version.source)[:SAMPLE_COUNT])
        except StaticSourceError as exc:
            return Samples(error=str(exc))
    result = sampler.sample(owner, source=version.source, content_hash=version.content_hash, handler=handler,
                            num_samples=SAMPLE_COUNT, seed=SAMPLE_SEED)
    if not result.ok:
        return Samples(error=redact_handler_paths(f"{result.status.value}: {result.error}", handler))
    return Samples(items=[Item.model_validate(raw) for raw in result.items])


def plot_png(samples: Samples, index: int) -> bytes | None:
    """Item ``index``'s series as a PNG drawn by the plot worker; None when there is no such
    item or it has no series. RenderError when the worker cannot draw it (a limit, a crash)."""
    if not 0 <= index < len(samples.items) or not samples.items[index].series:
        return None
    return render_item_png(samples.items[index])
