"""The deployment files: docker-compose.yml (parsed with PyYAML: no Docker engine runs here, and
`docker compose config` is not available) and the Dockerfile, checked against the project they
package: its extras, packages, settings, CLI commands and health route."""

from __future__ import annotations

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

from itemsmith.cli.app import app as cli_app
from itemsmith.api.settings import ApiSettings

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
    users = _dockerfile_instructions("USER")
    assert users and users[-1] not in ("root", "0")
    assert "/health" in _dockerfile_instructions("HEALTHCHECK")[0]
    assert _dockerfile_instructions("CMD")[-1] == '["itemsmith", "serve", "--host", "0.0.0.0"]'


def _copied_packages() -> list[str]:
    """The folders the Dockerfile copies into the image."""
    sources = [src for line in _dockerfile_instructions("COPY") for src in line.split()[:-1]]
    return sorted(src for src in sources if (ROOT / src).is_dir())


def test_dockerfile_copies_every_package_of_the_distribution() -> None:
    packages = {pattern.rstrip("*") for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert set(_copied_packages()) == packages
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
    for name in ("pyproject.toml", "README.md"):
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
    expected = {str(path.relative_to(ROOT)) for pattern in ("templates/*.html", "static/*") for path in web.glob(pattern)}
    expected |= {"templates_bank/migrations/script.py.mako", "templates_bank/migrations/versions/0002_service.py"}
    assert len(expected) > 4 and expected <= names
    assert any(name.startswith("templates_bank/curated/") and name.endswith(".py") for name in names)
