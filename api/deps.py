"""Request dependencies: a database session per request, the caller's API key.

The REST API authenticates by the ``X-API-Key`` header only: a browser never adds that header to
a cross-site request, so no other site can act with a visitor's credentials. The review page's
login cookie is for the review pages alone (`api.web.login`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Security, status
from fastapi.security import APIKeyHeader
from sqlalchemy.orm import Session

from itemsmith.api.settings import ApiSettings
from itemsmith.service.auth import Principal, authenticate
from itemsmith.templates_bank.storage import open_session

__all__ = ["PrincipalDep", "SessionDep", "SettingsDep"]

_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False,
                               description="An API key from `itemsmith keys create OWNER`.")


def get_settings(request: Request) -> ApiSettings:
    return request.app.state.settings


def get_session(request: Request) -> Iterator[Session]:
    """A session in a transaction, committed when the route returns (before the response is sent:
    a streamed response never holds a connection), rolled back if it raises."""
    with open_session(request.app.state.engine) as session:
        yield session


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
