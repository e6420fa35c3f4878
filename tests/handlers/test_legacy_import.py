"""Handlers of every generation load: `from itemsmith.handlers import DatasetHandler`, a plain class
importing nothing (TimeSeriesExamAgent style), and the pre-namespace `from handlers import ...`
(one deprecation notice, and the alias is gone afterwards), in this process and in the sandbox."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from itemsmith.handlers import DatasetHandler, HandlerSourceError, load_handler_source
from itemsmith.handlers.loader import LegacyHandlerImportWarning

BODY = '''
class Tiny{base}:
    def records(self):
        import pandas as pd
        return pd.DataFrame({{"record_id": ["a", "b"]}})

    def series(self, record_id):
        import pandas as pd
        return pd.DataFrame({{"value": [1.0, 2.0, 3.0]}})
'''
NAMESPACED = "from itemsmith.handlers import DatasetHandler\n" + BODY.format(base="(DatasetHandler)")
PLAIN = BODY.format(base="")
LEGACY = "from handlers import DatasetHandler\n" + BODY.format(base="(DatasetHandler)")
LEGACY_SUBMODULE = "from handlers.base import DatasetHandler\n" + BODY.format(base="(DatasetHandler)")
LEGACY_PLAIN_IMPORT = "import handlers\n" + BODY.format(base="(handlers.DatasetHandler)")


@pytest.mark.parametrize("source", [NAMESPACED, PLAIN], ids=["namespaced", "imports-nothing"])
def test_current_handlers_load_without_a_notice(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        handler = load_handler_source(source)
    assert isinstance(handler, DatasetHandler)
    assert handler.records()["record_id"].tolist() == ["a", "b"]


@pytest.mark.parametrize("source", [LEGACY, LEGACY_SUBMODULE, LEGACY_PLAIN_IMPORT],
                         ids=["from-handlers", "from-handlers-base", "import-handlers"])
def test_legacy_import_loads_with_one_notice_and_leaves_no_alias(source: str) -> None:
    assert "handlers" not in sys.modules
    with pytest.warns(LegacyHandlerImportWarning) as notices:
        handler = load_handler_source(source, filename="old_handler.py")
    assert len(notices) == 1
    message = str(notices[0].message)
    assert "\n" not in message and "old_handler.py" in message and "itemsmith.handlers" in message
    # the same class as everyone else's, not a second copy of the module
    assert isinstance(handler, DatasetHandler)
    assert "handlers" not in sys.modules and "handlers.base" not in sys.modules


def test_the_alias_does_not_outlive_the_load_or_replace_another_handlers_package() -> None:
    other = type(sys)("handlers")
    sys.modules["handlers"] = other
    try:
        with pytest.warns(LegacyHandlerImportWarning):
            load_handler_source(LEGACY)
        assert sys.modules["handlers"] is other
    finally:
        sys.modules.pop("handlers", None)


def test_a_module_named_like_handlers_in_a_string_is_not_a_legacy_import() -> None:
    source = 'NOTE = "from handlers import DatasetHandler"\n' + PLAIN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_handler_source(source)


def test_legacy_handler_that_is_broken_still_reports_the_real_error() -> None:
    with pytest.warns(LegacyHandlerImportWarning), pytest.raises(HandlerSourceError, match="NameError"):
        load_handler_source("from handlers import DatasetHandler\nundefined_name\n" + PLAIN)


@pytest.mark.parametrize("source", [NAMESPACED, PLAIN, LEGACY], ids=["namespaced", "imports-nothing", "legacy"])
def test_every_style_loads_in_the_sandbox_child(tmp_path: Path, source: str) -> None:
    from itemsmith.sandbox import run_template
    from itemsmith.sandbox.models import RunStatus

    path = tmp_path / "user_handler.py"
    path.write_text(source)
    template = ("def question(n):\n    ids = list(handler.records()['record_id'])\n"
                "    return [tf_item(f'record {ids[0]} exists', True) for _ in range(n)]\n")
    result = run_template(template, str(path), num_samples=2)
    assert result.status is RunStatus.ok, result.error
    assert [item["question"] for item in result.items] == ["record a exists"] * 2
