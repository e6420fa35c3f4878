"""The review page's login: the API key in an HttpOnly, SameSite=Strict cookie, and the checks
every form POST passes (a per-form token derived from the key, and the Origin header).

The form token is an HMAC of the key: a page that knows the key (ours, rendered for its owner)
can embed it; a cross-site page cannot compute it, and the token reveals nothing of the key.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import Depends, HTTPException, Request, Response, status
from pydantic import BaseModel

from itemsmith.service.auth import Principal, authenticate
from itemsmith.api.deps import SessionDep

__all__ = ["COOKIE_NAME", "LOGIN_PATH", "Reviewer", "ReviewerDep", "check_form", "clear_login", "form_token",
           "safe_next", "set_login"]

COOKIE_NAME = "itemsmith_key"  # the cookie api.deps also accepts
LOGIN_PATH = "/review/login"
_TOKEN_CONTEXT = b"itemsmith review form"


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


def clear_login(response: Response) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")


def get_reviewer(request: Request, session: SessionDep) -> Reviewer:
    """The cookie's principal; without a valid login, a redirect to the login form."""
    key = request.cookies.get(COOKIE_NAME)
    principal = authenticate(session, key) if key else None
    if principal is None:
        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise HTTPException(status.HTTP_303_SEE_OTHER, "log in first",
                            headers={"Location": f"{LOGIN_PATH}?next={quote(back, safe='/')}"})
    return Reviewer(principal=principal, form_token=form_token(key))


def check_form(request: Request, reviewer: Reviewer, token: str) -> None:
    """Refuse a form POST (403) whose token is wrong or whose Origin is another site."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "cross-site form submission refused")
    if not hmac.compare_digest(token, reviewer.form_token):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "invalid form token: reload the page and try again")


ReviewerDep = Annotated[Reviewer, Depends(get_reviewer)]
