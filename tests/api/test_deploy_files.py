"""The deployment files: docker-compose.yml (parsed with PyYAML: no Docker engine runs here, and
`docker compose config` is not available) and the Dockerfile, checked against the project they
package: its extras, packages, settings, CLI commands and health route."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from itemsmith.api.settings import ApiSettings
from itemsmith.cli.app import app as cli_app

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _substitute(value: str) -> str:
    """Compose's ``${NAME:-default}`` interpolation, with every variable unset."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


def _environment(service: str) -> dict[str, str]:
    return {name: _substitute(str(value)) for name, value in COMPOSE["services"][service]["environment"].items()}


def _dockerfile_instructions(name: str) -> list[str]:
    joined = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(f"{name} ")]


def test_compose_has_the_four_services_with_health_checks() -> None:
    services = COMPOSE["services"]
    assert set(services) == {"api", "worker", "postgres", "redis"}
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
    assert services["postgres"]["image"] == "postgres:16" and services["redis"]["image"] == "redis:7"
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "/health" in " ".join(services["api"]["healthcheck"]["test"])


def test_compose_starts_services_only_once_what_they_need_is_healthy() -> None:
    services = COMPOSE["services"]
    assert services["api"]["depends_on"] == {"postgres": {"condition": "service_healthy"},
                                             "redis": {"condition": "service_healthy"}}
    assert services["worker"]["depends_on"] == {"api": {"condition": "service_healthy"},
                                                "redis": {"condition": "service_healthy"}}


def test_compose_keeps_data_in_named_volumes() -> None:
    declared = set(COMPOSE["volumes"])
    mounts = {name: [m.split(":")[0] for m in service.get("volumes", [])]
              for name, service in COMPOSE["services"].items()}
    assert "pgdata" in mounts["postgres"] and "redisdata" in mounts["redis"]
    assert "uploads" in mounts["api"] and "uploads" in mounts["worker"]  # workers read uploaded handlers
    assert {m for used in mounts.values() for m in used} == declared


def test_compose_commands_and_settings_match_the_cli_and_api_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    api, worker = COMPOSE["services"]["api"], COMPOSE["services"]["worker"]
    assert api["command"] == ["itemsmith", "serve", "--host", "0.0.0.0"]
    assert worker["command"] == ["itemsmith", "worker"]
    assert "ports" not in worker and api["build"] == worker["build"] == "."
    for service in ("api", "worker"):
        environment = _environment(service)
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        settings = ApiSettings()
        assert settings.job_runner == "celery"
        assert settings.redis_url == "redis://redis:6379/0"
        assert settings.database_url == "postgresql://itemsmith:itemsmith@postgres:5432/itemsmith"
        assert str(settings.uploads_dir) == "/data/uploads"
    postgres = COMPOSE["services"]["postgres"]["environment"]
    assert _substitute(postgres["POSTGRES_PASSWORD"]) == "itemsmith" and postgres["POSTGRES_DB"] == "itemsmith"


@pytest.mark.parametrize("command", [["serve", "--help"], ["worker", "--help"], ["keys", "create", "--help"]])
def test_the_commands_the_deployment_runs_exist(command: list[str]) -> None:
    result = CliRunner().invoke(cli_app, command)
    assert result.exit_code == 0, result.output


def test_dockerfile_base_extras_user_and_healthcheck() -> None:
    assert _dockerfile_instructions("FROM") == ["python:3.11-slim"]
    extras = re.search(r"ARG EXTRAS=(\S+)", DOCKERFILE).group(1).split(",")
    assert set(extras) == {"postgres", "workers"}
    assert set(extras) <= set(PYPROJECT["project"]["optional-dependencies"])
    assert 'pip install ".[${EXTRAS}]"' in DOCKERFILE
    # root inside the container: the sandbox workers need it for their layers (see the tests below)
    assert _dockerfile_instructions("USER") == ["root"]
    assert "/health" in _dockerfile_instructions("HEALTHCHECK")[0]
    assert _dockerfile_instructions("CMD")[-1] == '["itemsmith", "serve", "--host", "0.0.0.0"]'


def _copied_packages() -> list[str]:
    """The folders the Dockerfile copies into the image."""
    sources = [src for line in _dockerfile_instructions("COPY") for src in line.split()[:-1]]
    return sorted(src for src in sources if (ROOT / src).is_dir())


def test_dockerfile_copies_every_package_of_the_distribution() -> None:
    setup_py = (ROOT / "setup.py").read_text()
    subpackages = set(re.search(r"SUBPACKAGES = \(([^)]*)\)", setup_py).group(1).replace('"', "").replace(",", " ").split())
    assert set(_copied_packages()) == subpackages | {"itemsmith"}
    assert "setup.py" in _dockerfile_instructions("COPY")[0].split()
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "tests"} <= set(ignored)


def _setuptools_version() -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in metadata.version("setuptools").split(".")[:2])
    except metadata.PackageNotFoundError:
        return (0,)


@pytest.mark.slow
def test_a_wheel_built_from_what_the_image_copies_ships_the_page_and_migrations(tmp_path: Path) -> None:
    """The image installs the package (not editable): its templates, static files, curated
    templates and migrations must be in the wheel."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in _copied_packages():
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # offline with the installed setuptools when it builds wheels itself (>= 70.1), else pip fetches one
    isolation = [] if _setuptools_version() < (70, 1) else ["--no-build-isolation"]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation,
                    "-w", str(tmp_path / "dist"), str(source)], check=True, timeout=300)
    wheel, = (tmp_path / "dist").glob("itemsmith-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    web = ROOT / "api" / "web"
    expected = {f"itemsmith/{path.relative_to(ROOT)}" for pattern in ("templates/*.html", "static/*")
                for path in web.glob(pattern)}  # one namespace in the wheel: itemsmith/<package>/...
    expected |= {"itemsmith/templates_bank/migrations/script.py.mako",
                 "itemsmith/templates_bank/migrations/versions/0002_service.py"}
    assert len(expected) > 4 and expected <= names, sorted(expected - names)[:5]
    assert any(name.startswith("itemsmith/templates_bank/curated/") and name.endswith(".py") for name in names)


# --- the sandbox layers in the container configuration ------------------------------------------
#
# Docker cannot run here, so the container's configuration is reproduced around the process the
# entrypoint starts: uid 0, the capabilities compose grants (setpriv empties the bounding set but
# for them, so python starts with exactly those), the environment the Dockerfile and compose set,
# and the start-up check `itemsmith serve` and `itemsmith worker` run. AppArmor and Docker's
# seccomp profile are set to unconfined in compose, so nothing else stands between the check and
# the kernel.

SANDBOX_CAPABILITIES = {"SYS_ADMIN", "SETUID", "SETGID", "SETPCAP", "KILL"}
SANDBOX_CHECK = ("from itemsmith.sandbox import check_isolation\n"
                 "print(check_isolation().model_dump_json())\n")


def _dockerfile_environment() -> dict[str, str]:
    pairs = [item.split("=", 1) for line in _dockerfile_instructions("ENV") for item in line.split()]
    return dict(pairs)


def _container_environment() -> dict[str, str]:
    """What `itemsmith serve` sees in the api container (provider keys left empty)."""
    return {"PATH": os.environ["PATH"], **_dockerfile_environment(), **_environment("api")}


def _run_as_the_container(capabilities: set[str]) -> subprocess.CompletedProcess[str]:
    bounding = ",".join(["-all", *(f"+{cap.lower()}" for cap in sorted(capabilities))])
    return subprocess.run(["setpriv", f"--bounding-set={bounding}", "--inh-caps=-all", "--reuid=0", "--regid=0",
                           "--clear-groups", sys.executable, "-c", SANDBOX_CHECK],
                          env=_container_environment(), capture_output=True, text=True, timeout=120, cwd="/")


def test_compose_gives_the_sandbox_what_its_layers_need() -> None:
    for name in ("api", "worker"):
        service = COMPOSE["services"][name]
        assert service["user"] == "0:0"
        assert service["cap_drop"] == ["ALL"] and set(service["cap_add"]) == SANDBOX_CAPABILITIES
        assert {"apparmor=unconfined", "seccomp=unconfined", "no-new-privileges:true"} <= set(service["security_opt"])
        assert _environment(name)["ITEMSMITH_SANDBOX_ALLOW_DEGRADED"] == "false"
        assert "ITEMSMITH_SANDBOX_DISABLED_LAYERS" not in _environment(name)
        assert "ITEMSMITH_SANDBOX_REQUIRED_LAYERS" not in _environment(name)  # the default: every layer
    assert _dockerfile_environment()["ITEMSMITH_SANDBOX_ALLOW_DEGRADED"] == "false"
    for cap in SANDBOX_CAPABILITIES:  # the Dockerfile says the same for `docker run`
        assert f"--cap-add {cap}" in DOCKERFILE


needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="reproducing the container needs root and setpriv")


@needs_root
def test_the_container_configuration_provides_every_layer() -> None:
    from itemsmith.sandbox import ALL_LAYERS

    done = _run_as_the_container(set(COMPOSE["services"]["api"]["cap_add"]))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    # netns, pidns, fsview, uid, capabilities, landlock, seccomp, rlimits: set up and seen from inside a child
    assert report["active"] == list(ALL_LAYERS) and report["verified"] == list(ALL_LAYERS), report
    assert report["missing"] == []


@needs_root
@pytest.mark.parametrize(("capability", "layers"), [("SYS_ADMIN", "fsview, netns, pidns"), ("SETUID", "uid"),
                                                   ("SETGID", "uid"), ("KILL", "uid"), ("SETPCAP", "capabilities")])
def test_each_capability_compose_grants_is_needed(capability: str, layers: str) -> None:
    """The check above can fail: one capability fewer and the service would not start."""
    done = _run_as_the_container(SANDBOX_CAPABILITIES - {capability})
    assert done.returncode != 0
    missing = re.search(r"required sandbox isolation layers unavailable: ([a-z, ]+) \(", done.stderr)
    assert missing, done.stderr[-2000:]
    # (here Python sits under /root: without the fsview, the uid layer cannot read it either)
    assert set(layers.split(", ")) <= set(missing.group(1).split(", "))
    assert f"CAP_{capability}" in done.stderr
