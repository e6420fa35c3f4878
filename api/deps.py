"""Request dependencies: a database session per request, the caller's API key.

The REST API authenticates by the ``X-API-Key`` header only: a browser never adds that header to
a cross-site request, so no other site can act with a visitor's credentials. The review page's
login cookie is for the review pages alone (`api.web.login`).

A request holds a session only while it holds one of the app's session slots
(``ITEMSMITH_API_DB_REQUEST_SLOTS``, default the engine's pool size): it waits for a slot without
holding a thread or a connection, and gets a 503 with Retry-After when none frees within
``ITEMSMITH_API_DB_WAIT_S``, so a burst of requests queues instead of exhausting the pool (whose
overflow is left to in-process jobs and key checks). A route that goes on to slow work (the
sandbox) gives its session back first (`release_session`)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from typing import Annotated

import anyio
import anyio.from_thread
from fastapi import Depends, FastAPI, HTTPException, Request, Security, status
from fastapi.security import APIKeyHeader
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from itemsmith.api.settings import ApiSettings
from itemsmith.service.auth import Principal, authenticate
from itemsmith.templates_bank.settings import BankSettings
from itemsmith.templates_bank.storage import open_session

__all__ = ["DB_RETRY_AFTER_S", "PrincipalDep", "SessionDep", "SettingsDep", "release_session", "session_slots"]

DB_RETRY_AFTER_S = 2

_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False,
                               description="An API key from `itemsmith keys create OWNER`.")


def get_settings(request: Request) -> ApiSettings:
    return request.app.state.settings


def session_slots(app: FastAPI) -> anyio.Semaphore:
    """The app's session slots (made on first use, in the app's event loop)."""
    slots = getattr(app.state, "session_slots", None)
    if slots is None:
        count = app.state.settings.db_request_slots or BankSettings().pool_size
        slots = app.state.session_slots = anyio.Semaphore(count)
    return slots


class _HeldSession:
    """The request's session; closed once, by the route (`release_session`) or when the request ends."""

    def __init__(self, request: Request) -> None:
        self.slots = session_slots(request.app)
        self._context: AbstractContextManager[Session] = open_session(request.app.state.engine)
        self.session = self._context.__enter__()  # no connection yet: the first statement takes one
        self._lock = threading.Lock()
        self._open = True

    def close(self, failed: BaseException | None) -> bool:
        """Commit (or roll back, after `failed`) and close; False when closed already."""
        with self._lock:
            if not self._open:
                return False
            self._open = False
        if failed is None:
            self._context.__exit__(None, None, None)
        else:
            self._context.__exit__(type(failed), failed, failed.__traceback__)
        return True


async def get_session(request: Request) -> AsyncIterator[Session]:
    """A session in a transaction, committed when the route returns (before the response is sent:
    a streamed response never holds a connection), rolled back if it raises."""
    slots = session_slots(request.app)
    try:
        with anyio.fail_after(request.app.state.settings.db_wait_s):
            await slots.acquire()
    except TimeoutError:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "the database is busy; try again shortly",
                            headers={"Retry-After": str(DB_RETRY_AFTER_S)}) from None
    try:
        held = _HeldSession(request)
    except BaseException:
        slots.release()
        raise
    request.state.held_session = held
    failed: BaseException | None = None
    try:
        yield held.session
    except BaseException as exc:
        failed = exc
        raise
    finally:
        closed = False
        try:
            closed = await run_in_threadpool(held.close, failed)
        finally:
            if closed:
                slots.release()


def release_session(request: Request) -> None:
    """Commit and give back the request's session and its slot now, from the route's worker
    thread, before slow work that needs no database; the session is not to be used after this."""
    held: _HeldSession | None = getattr(request.state, "held_session", None)
    if held is None:
        return
    closed = False
    try:
        closed = held.close(None)
    finally:
        if closed:
            anyio.from_thread.run_sync(held.slots.release)


def get_principal(session: Annotated[Session, Depends(get_session, scope="function")],
                  key: Annotated[str | None, Security(_api_key_header)]) -> Principal:
    if not key:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "missing API key: send it in the X-API-Key header",
                            headers={"WWW-Authenticate": "APIKey"})
    principal = authenticate(session, key)
    if principal is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "unknown or revoked API key",
                            headers={"WWW-Authenticate": "APIKey"})
    return principal


SettingsDep = Annotated[ApiSettings, Depends(get_settings)]
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
