"""The service's access log, with credentials redacted wherever they appear in a line.

Keys belong in the ``X-API-Key`` header, but a client can put one in the query string
(``?api_key=ism_...``, refused with a 401) or anywhere else in a URL, and a custom log format can
print headers. `RedactCredentials` masks, in every argument of every record the access log's
handler writes:

- the value of a query parameter whose name says it holds a credential: a word of its name (split at
  ``-``, ``_``, ``.`` and camelCase) is one of `CREDENTIAL_WORDS` (``api_key``, ``apiKey``,
  ``X-API-KEY``, ``access_token``, ``password`` ...; not ``monkey``);
- anything shaped like a credential, whatever it sits in: an itemsmith API key (``ism_`` and 20 or
  more URL-safe characters, also percent-encoded), a provider key (``sk-...``, ``sk-ant-...``), a bearer token.

`log_config()` is uvicorn's logging configuration with the filter on its access handler; `itemsmith
serve` runs uvicorn with it.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

__all__ = ["CREDENTIAL_WORDS", "RedactCredentials", "log_config", "redact_credentials"]

REDACTED = "[redacted]"
CREDENTIAL_WORDS = frozenset({"key", "apikey", "token", "accesstoken", "secret", "password", "passwd", "pwd", "pass",
                              "auth", "authorization", "credential", "credentials", "signature", "sig", "session",
                              "sessionid", "cookie", "jwt", "bearer"})
_SHAPED = re.compile(r"ism(?:_|%5[Ff])[A-Za-z0-9_\-%]{20,}|sk-(?:ant-)?[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*")
_PARAMETER = re.compile(r"((?:^|[?&;\s])([^=&;#\s]+)=)([^&;#\s]*)")
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _masked_if_named(match: re.Match[str]) -> str:
    words = {word.lower() for word in _WORD.findall(match[2])}
    return match[1] + REDACTED if words & CREDENTIAL_WORDS else match[0]


def redact_credentials(text: str) -> str:
    """`text` with credentials masked (the module's docstring says which)."""
    return _SHAPED.sub(REDACTED, _PARAMETER.sub(_masked_if_named, text))


class RedactCredentials(logging.Filter):
    """A logging filter that redacts every string argument of a record (and its message), keeping the
    arguments' number and order: uvicorn's access formatter unpacks them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_credentials(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_credentials(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact_credentials(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with `RedactCredentials` on the access log's handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_credentials"] = {"()": f"{__name__}.RedactCredentials"}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact_credentials")
    return config
