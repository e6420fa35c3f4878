"""The review page's login: the API key in an HttpOnly, SameSite=Strict cookie, and the checks
every form POST passes (a per-form token, and the Origin header).

The decision forms' token is an HMAC of the key: a page that knows the key (ours, rendered for
its owner) can embed it; another page cannot compute it, and the token reveals nothing of the key.
The login form's token is a random value also set in a cookie of the login path (the form and the
cookie must agree). SameSite does not separate the ports of one host, so every form POST also
needs an Origin (or, without one, a Referer) of exactly this scheme, host and port; a request
with neither (not a browser) relies on the token alone. The REST API never accepts this cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import Depends, HTTPException, Request, Response, status
from pydantic import BaseModel

from itemsmith.api.deps import SessionDep
from itemsmith.service.auth import Principal, authenticate

__all__ = ["COOKIE_NAME", "LOGIN_FORM_MAX_BYTES", "LOGIN_PATH", "Reviewer", "ReviewerDep", "check_form",
           "clear_login", "form_token", "login_form_error", "new_login_token", "safe_next", "same_origin",
           "set_login", "set_login_token"]

COOKIE_NAME = "itemsmith_key"
LOGIN_PATH = "/review/login"
LOGIN_TOKEN_COOKIE = "itemsmith_login"
LOGIN_FORM_MAX_BYTES = 16 * 1024  # the one form anyone may post: a key, a path and a token
_TOKEN_CONTEXT = b"itemsmith review form"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Reviewer(BaseModel):
    """The logged-in reviewer and the token their forms carry."""

    principal: Principal
    form_token: str


def form_token(key: str) -> str:
    return hmac.new(key.encode(), _TOKEN_CONTEXT, hashlib.sha256).hexdigest()


def safe_next(target: str | None) -> str:
    """Where to go after login: a path of the review page only (never another site)."""
    if target and target.startswith("/review") and not target.startswith("//"):
        return target
    return "/review"


def set_login(response: Response, request: Request, key: str) -> None:
    response.set_cookie(COOKIE_NAME, key, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https")
    response.delete_cookie(LOGIN_TOKEN_COOKIE, path=LOGIN_PATH, httponly=True, samesite="strict")


def clear_login(response: Response) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")


def new_login_token() -> str:
    """A fresh token for one rendering of the login form (see `set_login_token`)."""
    return secrets.token_urlsafe(32)


def set_login_token(response: Response, request: Request, token: str) -> None:
    """The login form's token as the cookie its POST must bring back."""
    response.set_cookie(LOGIN_TOKEN_COOKIE, token, httponly=True, samesite="strict", path=LOGIN_PATH,
                        secure=request.url.scheme == "https")


def _origin(url: str) -> tuple[str, str, int | None] | None:
    parts = urlsplit(url)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port or _DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return None
    return parts.scheme, parts.hostname.lower(), port


def same_origin(request: Request) -> bool:
    """Whether the request's Origin (else its Referer) is this server's scheme, host AND port; a
    request with neither header (not a browser's) passes, on its token alone."""
    claimed = request.headers.get("origin") or request.headers.get("referer")
    if claimed is None:
        return True
    ours = _origin(str(request.base_url))
    return ours is not None and _origin(claimed) == ours


def login_form_error(request: Request, token: str) -> str | None:
    """Why a login POST is refused (another origin, or not the token of its login form); None: it is not."""
    if not same_origin(request):
        return "Cross-site login refused."
    expected = request.cookies.get(LOGIN_TOKEN_COOKIE, "")
    if not expected or not hmac.compare_digest(token.encode(), expected.encode()):
        return "The login form expired: try again."
    return None


def get_reviewer(request: Request, session: SessionDep) -> Reviewer:
    """The cookie's principal; without a valid login, a redirect to the login form."""
    key = request.cookies.get(COOKIE_NAME)
    principal = authenticate(session, key) if key else None
    if principal is None or key is None:
        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise HTTPException(status.HTTP_303_SEE_OTHER, "log in first",
                            headers={"Location": f"{LOGIN_PATH}?next={quote(back, safe='/')}"})
    return Reviewer(principal=principal, form_token=form_token(key))


def check_form(request: Request, reviewer: Reviewer, token: str) -> None:
    """Refuse a form POST (403) whose token is wrong or whose origin is not exactly ours."""
    if not same_origin(request):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "cross-site form submission refused")
    if not hmac.compare_digest(token.encode(), reviewer.form_token.encode()):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "invalid form token: reload the page and try again")


ReviewerDep = Annotated[Reviewer, Depends(get_reviewer)]
