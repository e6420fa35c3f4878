"""The error of a handler that cannot be loaded, apart from the loader so that naming a handler (the
CLI's check of ``--handler``) imports no data library."""

from __future__ import annotations

__all__ = ["HandlerSourceError"]


class HandlerSourceError(ValueError):
    """The handler source cannot be turned into a working DatasetHandler."""
