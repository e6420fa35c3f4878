# The itemsmith service image: the REST API and review page (`itemsmith serve`) and the job
# workers (`itemsmith worker`) run from it; docker-compose.yml wires them to PostgreSQL and Redis.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ITEMSMITH_DATA_DIR=/data \
    MPLCONFIGDIR=/tmp/matplotlib

# libseccomp2: the sandbox's syscall filter (pyseccomp loads it with ctypes).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/itemsmith
COPY pyproject.toml README.md ./
COPY agents ./agents
COPY api ./api
COPY handlers ./handlers
COPY sandbox ./sandbox
COPY templates_bank ./templates_bank
COPY verification ./verification
# Extras: PostgreSQL and Celery always; add e.g. --build-arg EXTRAS=postgres,workers,examples for the
# real-data handlers.
ARG EXTRAS=postgres,workers
RUN pip install ".[${EXTRAS}]" && rm -rf build *.egg-info

# A user of its own; /data holds the SQLite default and uploaded handler files (created here so
# that volumes mounted on them start out owned by that user).
RUN useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin itemsmith \
    && mkdir -p /data/uploads \
    && chown -R itemsmith:itemsmith /data
USER itemsmith
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]

CMD ["itemsmith", "serve", "--host", "0.0.0.0"]
