"""Framing between the host and a worker: a JSON header plus an optional raw payload.

Frame: 4-byte header length, 8-byte payload length (both little-endian), header JSON, payload.
Reads are bounded by a deadline and by size caps, so a stuck or hostile peer cannot hang or
flood the reader.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

_PREFIX = struct.Struct("<IQ")
MAX_HEADER = 16 * 1024 * 1024


class ProtocolError(RuntimeError):
    """The peer closed the channel, timed out, or sent something malformed."""


def write_frame(fd: int, header: dict[str, Any], payload: bytes = b"") -> None:
    body = json.dumps(header, separators=(",", ":")).encode("utf-8")
    data = memoryview(_PREFIX.pack(len(body), len(payload)) + body + payload)
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    remaining = n
    while remaining:
        if deadline is not None:
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                raise ProtocolError("timed out waiting for the worker")
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise ProtocolError("timed out waiting for the worker")
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ProtocolError("the worker closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, *, deadline: float | None = None,
               max_payload: int = 1 << 30) -> tuple[dict[str, Any], bytes]:
    header_len, payload_len = _PREFIX.unpack(_read_exact(fd, _PREFIX.size, deadline))
    if header_len > MAX_HEADER or payload_len > max_payload:
        raise ProtocolError("frame over the size limit")
    try:
        header = json.loads(_read_exact(fd, header_len, deadline))
    except ValueError as exc:
        raise ProtocolError(f"malformed frame header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("malformed frame header")
    payload = _read_exact(fd, payload_len, deadline) if payload_len else b""
    return header, payload
