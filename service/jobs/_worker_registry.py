"""Which Celery workers are alive: each `itemsmith worker` process keeps a key in the broker's
Redis (``itemsmith:worker:<name>``) that expires unless renewed, so `/health` counts the live ones
without a round trip through every worker. A key lost with a broker restart is written again at
the next beat."""

from __future__ import annotations

import logging
import threading

__all__ = ["WORKER_KEY_PREFIX", "WorkerBeat", "alive_workers"]

WORKER_KEY_PREFIX = "itemsmith:worker:"
log = logging.getLogger("itemsmith.jobs")


class WorkerBeat:
    """Renews this worker's key every `interval_s` (expiring after three missed beats) in a thread."""

    def __init__(self, redis_url: str, name: str, interval_s: float = 5.0) -> None:
        import redis  # the workers extra

        self._errors = redis.RedisError
        self._client = redis.Redis.from_url(redis_url, socket_timeout=interval_s, socket_connect_timeout=interval_s)
        self.key = WORKER_KEY_PREFIX + name
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="itemsmith-worker-beat", daemon=True)

    def _beat(self) -> None:
        try:
            self._client.set(self.key, "alive", ex=max(1, round(self.interval_s * 3)))
        except self._errors as exc:  # the broker is away: beat again later
            log.warning("worker beat failed: %s", exc)

    def _loop(self) -> None:
        self._beat()
        while not self._stop.wait(self.interval_s):
            self._beat()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.interval_s * 2)
        try:
            self._client.delete(self.key)
        except self._errors:
            pass  # the key expires by itself
        self._client.close()


def alive_workers(redis_url: str, timeout_s: float = 2.0) -> int:
    """How many workers beat within the last three beats (`redis.RedisError` when the broker is away)."""
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
    try:
        return sum(1 for _ in client.scan_iter(match=WORKER_KEY_PREFIX + "*", count=1000))
    finally:
        client.close()
