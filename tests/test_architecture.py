"""The layer contracts (pyproject.toml [tool.importlinter], docs/architecture.md) hold, cover every
installed package, and can fail: a forbidden import planted in a copy of the tree breaks them."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONTRACTS = PYPROJECT["tool"]["importlinter"]["contracts"]
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")


def _layers() -> list[set[str]]:
    (contract,) = [c for c in CONTRACTS if c["name"] == "Layers, highest first"]
    return [{name.strip() for name in layer.replace("|", ":").split(":")} for layer in contract["layers"]]


def _subpackages() -> tuple[str, ...]:
    line = next(line for line in (ROOT / "setup.py").read_text().splitlines() if line.startswith("SUBPACKAGES"))
    return ast.literal_eval(line.split("=", 1)[1].strip())


def test_every_installed_package_is_in_a_layer() -> None:
    named = {name.strip().split(".")[1] for layer in _layers() for name in layer}
    assert set(_subpackages()) == named


def _tree_with(tmp_path: Path, planted: dict[str, str]) -> Path:
    """A copy of the namespace tree (links, except the folders that get a planted module)."""
    root = tmp_path / "tree"
    (root / "itemsmith").mkdir(parents=True)
    for module in (ROOT / "itemsmith").glob("*.py"):
        (root / "itemsmith" / module.name).symlink_to(module)
    planted_tops = {path.split("/", 1)[0] for path in planted}
    for top in _subpackages():
        if top in planted_tops:
            shutil.copytree(ROOT / top, root / "itemsmith" / top, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (root / "itemsmith" / top).symlink_to(ROOT / top)
    for path, source in planted.items():
        (root / "itemsmith" / path).write_text(source)
    return root


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([LINT_IMPORTS, str(ROOT / "pyproject.toml"), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_contracts_hold_on_the_tree(tmp_path: Path) -> None:
    result = _lint_imports(_tree_with(tmp_path, {}))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout and result.stdout.count("KEPT") == len(CONTRACTS)


@pytest.mark.parametrize(("planted", "broken"), [
    ({"items/_planted.py": "import itemsmith.templates_bank.storage\n"},
     "The item vocabulary imports nothing of ours"),
    ({"items/planted.py": "from itemsmith.handlers import DatasetHandler\n"}, "Layers, highest first"),
    ({"handlers/planted.py": "from itemsmith.sandbox import run_template\n"}, "Layers, highest first"),
    ({"templates_bank/storage/planted.py": "import itemsmith.agents.authoring.run\n"}, "Layers, highest first"),
    ({"service/planted.py": "from itemsmith.api import settings\n"}, "Layers, highest first"),
    ({"api/planted.py": "from itemsmith.cli import app\n"}, "Layers, highest first"),
    ({"service/planted.py": "from itemsmith.templates_bank.storage._models import BankRow\n"},
     "Private modules stay in their package"),
    ({"api/planted.py": "from itemsmith.service.tables import JobRow\n"},
     "The API reaches jobs and keys through the service's functions"),
    ({"agents/stages/planted.py": "from itemsmith.agents.authoring import author\n"},
     "Inside agents: authoring, then the stages, then the model layer"),
    ({"agents/llm/planted.py": "def later():\n    from itemsmith.agents.stages.verify import Verifier\n"},
     "Inside agents: authoring, then the stages, then the model layer"),
    ({"service/jobs/planted_a.py": "from itemsmith.service.jobs import planted_b\n",
      "service/jobs/planted_b.py": "def later():\n    from itemsmith.service.jobs import planted_a\n"},
     "No import loops between sibling modules"),
], ids=["vocabulary-imports-bank", "vocabulary-imports-handlers", "handlers-import-sandbox", "storage-imports-agents", "service-imports-api",
        "api-imports-cli", "private-module", "api-imports-service-tables", "stages-import-authoring",
        "model-layer-imports-stages", "import-loop"])
def test_a_planted_forbidden_import_breaks_its_contract(tmp_path: Path, planted: dict[str, str], broken: str) -> None:
    result = _lint_imports(_tree_with(tmp_path, planted))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken} BROKEN" in result.stdout, result.stdout
