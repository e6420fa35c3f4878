# The itemsmith service image: the REST API and review page (`itemsmith serve`) and the job
# workers (`itemsmith worker`) run from it; docker-compose.yml wires them to PostgreSQL and Redis.
#
# Sandbox layers (docs/operator.md, "Sandbox layers"): the service starts as root *inside* the
# container, because its sandbox workers set up network/PID/mount namespaces and drop every
# template run to a uid of its own with no capabilities. Both `itemsmith serve` and `itemsmith
# worker` refuse to start unless every layer is active, so the container needs (compose sets
# these; with `docker run` pass them yourself):
#   --cap-drop ALL --cap-add SYS_ADMIN --cap-add SETUID --cap-add SETGID --cap-add SETPCAP
#   --cap-add KILL --security-opt apparmor=unconfined --security-opt seccomp=unconfined
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ITEMSMITH_DATA_DIR=/data \
    MPLCONFIGDIR=/tmp/matplotlib \
    ITEMSMITH_SANDBOX_ALLOW_DEGRADED=false

# libseccomp2: the sandbox's syscall filter (pyseccomp loads it with ctypes).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/itemsmith
COPY pyproject.toml setup.py README.md ./
COPY itemsmith ./itemsmith
COPY agents ./agents
COPY api ./api
COPY cli ./cli
COPY handlers ./handlers
COPY items ./items
COPY sandbox ./sandbox
COPY service ./service
COPY templates_bank ./templates_bank
COPY verification ./verification
# Extras: PostgreSQL and Celery always; add e.g. --build-arg EXTRAS=postgres,workers,examples for the
# real-data handlers.
ARG EXTRAS=postgres,workers
RUN pip install ".[${EXTRAS}]" && rm -rf build *.egg-info

# /data holds the SQLite default and uploaded handler files, private to the service: a template
# run (a uid of its own) could not read them even without the sandbox's filesystem view.
RUN mkdir -p /data/uploads && chmod 0700 /data
# root in the container (see the top of this file); every template run drops to its own uid
USER root
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]

CMD ["itemsmith", "serve", "--host", "0.0.0.0"]
