"""The FastAPI application: ``create_app()``; ``itemsmith serve`` runs it with uvicorn."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from itemsmith.service.jobs import jobs_lifespan, make_runner
from itemsmith.api.routes import api_router
from itemsmith.api.web import router as review_page_router
from itemsmith.api.settings import ApiSettings
from itemsmith.templates_bank.storage import NotFoundError, StorageError, get_engine, require_current_schema

__all__ = ["create_app"]


async def _not_found(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=404, content={"detail": str(exc)})


async def _storage_conflict(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=409, content={"detail": str(exc)})


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 without the submitted values (``input``, ``ctx``): a request can carry a secret
    typed into the wrong field, and an error body ends up in logs."""
    errors = [{k: v for k, v in error.items() if k not in ("input", "ctx", "url")}
              for error in exc.errors()]  # type: ignore[attr-defined]
    return JSONResponse(status_code=422, content={"detail": jsonable_encoder(errors)})


class BodySizeLimit:
    """Refuses a request whose declared body exceeds the upload cap before any of it is read
    (Starlette would otherwise spool a whole multipart upload to disk first)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = dict(scope["headers"]).get(b"content-length")
            if length is not None and length.isdigit() and int(length) > self.max_bytes:
                response = JSONResponse(status_code=413, content={
                    "detail": f"request body of {int(length)} bytes exceeds the limit of {self.max_bytes} bytes "
                              "(ITEMSMITH_API_MAX_UPLOAD_BYTES)"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(settings: ApiSettings | None = None) -> FastAPI:
    """The app on the configured bank database, which must be migrated (``itemsmith db upgrade``)."""
    settings = settings or ApiSettings()
    engine = get_engine(settings.database_url)
    require_current_schema(engine)
    app = FastAPI(title="itemsmith", version="0.1.0", lifespan=jobs_lifespan,
                  description="Authoring, verification and review of time-series reasoning benchmarks.")
    app.state.settings = settings
    app.state.engine = engine
    app.state.job_runner = make_runner(settings, engine)
    app.add_exception_handler(NotFoundError, _not_found)
    app.add_exception_handler(StorageError, _storage_conflict)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    # room for the form fields and multipart framing beside the files themselves
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_upload_bytes + settings.max_handler_source_bytes + 65536)
    app.include_router(api_router)
    app.include_router(review_page_router)
    return app
