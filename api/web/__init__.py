"""The review web page (server-rendered, no build step): `router` serves it under /review."""

from itemsmith.api.web.routes import router

__all__ = ["router"]
