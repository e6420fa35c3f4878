"""Framing between the host and a worker: a JSON header plus an optional raw payload.

Frame: 4-byte header length, 8-byte payload length (both little-endian), header JSON, payload.
Reads are bounded by a deadline and by size caps, so a stuck or hostile peer cannot hang or
flood the reader. A sandbox child's result to its worker is a separate, sealed frame
(`seal_result` / `open_result`).
"""

from __future__ import annotations

import hashlib
import hmac
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


# --- a run's result, as a sandbox child writes it to its worker ---------------------------------
#
# Sealed with a per-run key: the worker makes the key, hands it to the child's trusted code
# before any template code runs, and accepts exactly one sealed frame followed by end of file.
# What this does and does not stop is written down in docs/operator.md ("Sandbox layers").

RESULT_KEY_BYTES = 32
_RESULT_PREFIX = struct.Struct("<Q")
_TAG_BYTES = hashlib.sha256().digest_size


class ResultRejected(ProtocolError):
    """A child's result frame failed authentication or framing."""


def seal_result(key: bytes, payload: bytes) -> bytes:
    """Length, payload and HMAC-SHA256(key, length + payload)."""
    head = _RESULT_PREFIX.pack(len(payload))
    return head + payload + hmac.new(key, head + payload, hashlib.sha256).digest()


def result_frame_size(data: bytes) -> int | None:
    """The size of the sealed frame `data` starts with, once its length prefix is there."""
    if len(data) < _RESULT_PREFIX.size:
        return None
    return _RESULT_PREFIX.size + _RESULT_PREFIX.unpack_from(data)[0] + _TAG_BYTES


def open_result(key: bytes, data: bytes) -> bytes:
    """The payload of the one sealed frame that must make up all of `data`."""
    size = result_frame_size(data)
    if size is None or len(data) < size:
        raise ResultRejected("the sandbox child's result is incomplete")
    if len(data) > size:
        raise ResultRejected("the sandbox child wrote more than one result")
    head_and_payload, tag = data[:-_TAG_BYTES], data[-_TAG_BYTES:]
    if not hmac.compare_digest(hmac.new(key, head_and_payload, hashlib.sha256).digest(), tag):
        raise ResultRejected("the sandbox child's result failed authentication")
    return head_and_payload[_RESULT_PREFIX.size:]
