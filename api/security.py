"""HTTP-level protections of the service, as ASGI middleware around the whole app.

`RequestBodyGate`: a request that carries a body (sized or chunked) is authenticated BEFORE any of
its body is read (the ``X-API-Key`` header on the REST API, the login cookie on the review pages;
only the login form is public), and its bytes are counted while they stream in: past the route's
cap it gets 413 and no more is read. So an unauthenticated upload is refused with nothing spooled,
and an authenticated one never puts more than its cap on disk.

`SecurityHeaders`: every response says it may not be framed (``X-Frame-Options: DENY`` and a CSP
with ``frame-ancestors 'none'``) and may run scripts from this server only.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyCaps", "BodyTooLarge", "CONTENT_SECURITY_POLICY", "RequestBodyGate", "SecurityHeaders"]

CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                           "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                           "form-action 'self'; frame-ancestors 'none'")
# a refused body is not drained: the server hangs up instead of reading (and discarding) the rest
_CLOSE = {"Connection": "close"}
# the routes that take files: a handler with its data files (POST /banks), a benchmark's items
_UPLOAD_PATHS = re.compile(r"/banks(/imports|/[0-9]+/imports)?")
_HEADERS = [(b"x-frame-options", b"DENY"), (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
            (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]


class SecurityHeaders:
    """Adds the anti-framing, CSP and no-sniff headers to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((name, value) for name, value in _HEADERS if name not in present)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes its cap (FastAPI passes it on as a 413)."""

    def __init__(self, cap: int) -> None:
        super().__init__(413, f"request body exceeds the limit of {cap} bytes", headers=dict(_CLOSE))


@dataclass(frozen=True)
class BodyCaps:
    """The most bytes a request body may have, by route kind."""

    upload: int  # POST /banks, /banks/imports, /banks/{id}/imports: the files and form fields
    default: int  # JSON bodies of the REST API and the review page's forms
    login: int  # the one unauthenticated form


Authenticator = Callable[[str], Awaitable[bool]]  # an API key -> whether it is live


def _carries_body(headers: dict[bytes, bytes]) -> bool:
    return b"transfer-encoding" in headers or headers.get(b"content-length", b"0").strip() not in (b"", b"0")


class RequestBodyGate:
    """Authenticates a request with a body before reading it, then enforces its cap while streaming.
    Requests without a body pass untouched (their routes authenticate them as usual)."""

    def __init__(self, app: ASGIApp, *, caps: BodyCaps, is_live_key: Authenticator, cookie_name: str,
                 login_path: str) -> None:
        self.app, self.caps, self.is_live_key = app, caps, is_live_key
        self.cookie_name, self.login_path = cookie_name, login_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if not _carries_body(headers):
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        refusal, cap = await self._admit(path, method, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        length = headers.get(b"content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > cap):
            await _too_large(cap)(scope, receive, send)
            return
        await self._counted(scope, receive, send, cap)

    async def _admit(self, path: str, method: str, headers: dict[bytes, bytes]) -> tuple[Response | None, int]:
        """(a refusal, or None to go on; the body cap)."""
        if path == self.login_path and method == "POST":
            return None, self.caps.login
        if path == "/review" or path.startswith("/review/"):
            key = _cookie(headers, self.cookie_name)
            if key is None or not await self.is_live_key(key):
                return RedirectResponse(self.login_path, status_code=303, headers=_CLOSE), 0
            return None, self.caps.default
        key = headers.get(b"x-api-key", b"").decode("latin-1").strip()
        if not key:
            return _unauthorized("missing API key: send it in the X-API-Key header"), 0
        if not await self.is_live_key(key):
            return _unauthorized("unknown or revoked API key"), 0
        return None, self.caps.upload if method == "POST" and _UPLOAD_PATHS.fullmatch(path) else self.caps.default

    async def _counted(self, scope: Scope, receive: Receive, send: Send, cap: int) -> None:
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise BodyTooLarge(cap)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLarge:
            if not started:  # a route that read the body outside FastAPI's own parsing
                await _too_large(cap)(scope, receive, send)


def _cookie(headers: dict[bytes, bytes], name: str) -> str | None:
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name and value:
            return value
    return None


def _unauthorized(detail: str) -> Response:
    return JSONResponse(status_code=401, content={"detail": detail}, headers={"WWW-Authenticate": "APIKey", **_CLOSE})


def _too_large(cap: int) -> Response:
    return JSONResponse(status_code=413, content={"detail": f"request body exceeds the limit of {cap} bytes"},
                        headers=_CLOSE)
