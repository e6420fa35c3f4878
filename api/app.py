"""The FastAPI application: ``create_app()``; ``itemsmith serve`` runs it with uvicorn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import Engine
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.concurrency import run_in_threadpool

from itemsmith.api.deps import DB_RETRY_AFTER_S
from itemsmith.api.description import DescribedPaths, HeldToDescription
from itemsmith.api.docs import router as docs_router
from itemsmith.api.openapi import install_openapi, operation_id
from itemsmith.api.routes import api_router
from itemsmith.api.security import BodyCaps, RequestBodyGate, SecurityHeaders
from itemsmith.api.settings import ApiSettings
from itemsmith.api.web import router as review_page_router
from itemsmith.api.web.login import COOKIE_NAME, LOGIN_FORM_MAX_BYTES, LOGIN_PATH
from itemsmith.sandbox import IsolationUnavailable
from itemsmith.service.auth import authenticate
from itemsmith.service.jobs import jobs_lifespan, make_runner
from itemsmith.service.sampling import SamplerBusy, TemplateSampler
from itemsmith.templates_bank.storage import (
    NotFoundError,
    StorageError,
    get_engine,
    open_session,
    require_current_schema,
)

__all__ = ["create_app"]


async def _not_found(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=404, content={"detail": str(exc)})


async def _sandbox_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """A required sandbox isolation layer is missing: the service's fault, not the request's."""
    return JSONResponse(status_code=503, content={"detail": str(exc)})


async def _sampler_busy(request: Request, exc: Exception) -> JSONResponse:
    """The owner has too much sandbox work queued: the request may be retried, never a 500."""
    assert isinstance(exc, SamplerBusy)
    return JSONResponse(status_code=503, content={"detail": str(exc)},
                        headers={"Retry-After": str(exc.retry_after_s)})


async def _pool_full(request: Request, exc: Exception) -> JSONResponse:
    """No database connection freed in time (the pool is shared with jobs and key checks)."""
    return JSONResponse(status_code=503, content={"detail": "the database is busy; try again shortly"},
                        headers={"Retry-After": str(DB_RETRY_AFTER_S)})


async def _storage_conflict(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(status_code=409, content={"detail": str(exc)})


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 without the submitted values (``input``, ``ctx``): a request can carry a secret
    typed into the wrong field, and an error body ends up in logs."""
    errors = [{k: v for k, v in error.items() if k not in ("input", "ctx", "url")}
              for error in exc.errors()]  # type: ignore[attr-defined]
    return JSONResponse(status_code=422, content={"detail": jsonable_encoder(errors)})


def _described(app: FastAPI) -> DescribedPaths:
    """The app's description as `DescribedPaths`, built once, from the finished app."""
    if getattr(app.state, "described", None) is None:
        app.state.described = DescribedPaths(app.openapi())
    described: DescribedPaths = app.state.described
    return described


def _key_checker(engine: Engine) -> Callable[[str], Awaitable[bool]]:
    def is_live(key: str) -> bool:
        with open_session(engine) as session:
            return authenticate(session, key) is not None

    async def is_live_key(key: str) -> bool:
        return await run_in_threadpool(is_live, key)

    return is_live_key


def create_app(settings: ApiSettings | None = None) -> FastAPI:
    """The app on the configured bank database, which must be migrated (``itemsmith db upgrade``)."""
    settings = settings or ApiSettings()
    engine = get_engine(settings.database_url)
    require_current_schema(engine)
    app = FastAPI(title="itemsmith", version="0.1.0", lifespan=jobs_lifespan, docs_url=None, redoc_url=None,
                  description="Authoring, verification and review of time-series reasoning benchmarks.",
                  generate_unique_id_function=operation_id)
    install_openapi(app)
    app.state.settings = settings
    app.state.engine = engine
    app.state.job_runner = make_runner(settings, engine)
    app.state.sampler = TemplateSampler(settings)
    app.add_exception_handler(NotFoundError, _not_found)
    app.add_exception_handler(StorageError, _storage_conflict)
    app.add_exception_handler(IsolationUnavailable, _sandbox_unavailable)
    app.add_exception_handler(SamplerBusy, _sampler_busy)
    app.add_exception_handler(PoolTimeout, _pool_full)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    # the last added is the outermost: refusals of the body gate get the security headers too
    caps = BodyCaps(upload=settings.max_upload_bytes + settings.max_handler_source_bytes + 65536,  # + form fields
                    default=settings.max_request_bytes, login=LOGIN_FORM_MAX_BYTES)
    app.add_middleware(HeldToDescription, paths=lambda: _described(app), is_live_key=_key_checker(engine))
    app.add_middleware(RequestBodyGate, caps=caps, is_live_key=_key_checker(engine), cookie_name=COOKIE_NAME,
                       login_path=LOGIN_PATH)
    app.add_middleware(SecurityHeaders)
    app.include_router(api_router)
    app.include_router(review_page_router)
    app.include_router(docs_router)
    return app
