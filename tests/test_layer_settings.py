"""The layers' settings models read every variable by one naming rule, refuse what they cannot
use with the variable's name, and still read a renamed variable under its old name."""

from __future__ import annotations

import logging

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.cli.settings import SETTINGS_MODELS, setting_rows
from itemsmith.layer_settings import PREFIX, InvalidSettings, LayerSettings
from itemsmith.registry import LazyTarget
from itemsmith.sandbox.settings import SandboxSettings
from itemsmith.templates_bank.settings import BankSettings
from itemsmith.verification.settings import VerificationSettings

MODELS: dict[str, type[LayerSettings]] = {
    target.split(":")[1]: LazyTarget(target).load() for _, target in SETTINGS_MODELS}
NOT_A_VALUE = "not-a-value-7f3a"


def _path(row: dict[str, str]) -> tuple[type[LayerSettings], tuple[str, ...]]:
    """The field the rule says a row's variable names: ITEMSMITH_[SECTION_]FIELD (the service's
    prefix is its own)."""
    model_name, _, section = row["model"].partition(".")
    model = MODELS[model_name]
    name = row["variable"].split(" / ")[0]
    prefix = str(model.model_config.get("env_prefix", PREFIX)) + (f"{section}_".upper() if section else "")
    assert name.startswith(prefix), name
    return model, ((section,) if section else ()) + (name[len(prefix):].lower(),)


def _read(settings: LayerSettings, path: tuple[str, ...]) -> object:
    value: object = settings
    for part in path:
        value = getattr(value, part)
    reveal = getattr(value, "get_secret_value", None)
    return reveal() if reveal is not None else value


@pytest.mark.parametrize("row", setting_rows(), ids=lambda row: row["variable"].split(" / ")[0])
def test_every_listed_variable_reaches_the_field_its_name_says(row: dict[str, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Set to a value no setting accepts as a number, flag, choice, list or model spec, a variable
    either lands in the field its name names or is refused with that name: never ignored."""
    model, path = _path(row)
    name = row["variable"].split(" / ")[0]
    monkeypatch.setenv(name, NOT_A_VALUE)
    try:
        settings = model()
    except InvalidSettings as exc:
        assert name in str(exc)
    else:
        assert NOT_A_VALUE in str(_read(settings, path))


def test_a_section_reads_its_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_SANDBOX_WALL_S", "7")
    monkeypatch.setenv("ITEMSMITH_SANDBOX_REQUIRED_LAYERS", '["netns", "seccomp"]')
    monkeypatch.setenv("ITEMSMITH_RENDER_CPU_S", "3")
    monkeypatch.setenv("ITEMSMITH_AUDIT_ITEMS", "120")
    monkeypatch.setenv("ITEMSMITH_DIVERSITY_EMBEDDER", "off")
    sandbox = SandboxSettings()
    assert (sandbox.sandbox.wall_s, sandbox.sandbox.required_layers, sandbox.render.cpu_s) == (7, ("netns", "seccomp"), 3)
    assert VerificationSettings().audit.items == 120 and BankSettings().diversity.embedder == "off"
    assert VerificationSettings(audit={"min_items": 30}).audit.items == 120  # code and environment combine


def test_a_misspelt_variable_of_a_section_is_refused_with_the_near_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_SANDBOX_WAL_S", "3")
    with pytest.raises(InvalidSettings, match=r"ITEMSMITH_SANDBOX_WAL_S: not a setting \(did you mean "
                                              r"ITEMSMITH_SANDBOX_WALL_S\?\)"):
        SandboxSettings()


def test_a_value_that_is_not_json_is_refused_with_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_SANDBOX_REQUIRED_LAYERS", "netns,seccomp")
    with pytest.raises(InvalidSettings, match=r"ITEMSMITH_SANDBOX_REQUIRED_LAYERS: not JSON \('netns,seccomp'\)"):
        SandboxSettings()
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_SMALL_SIZE", "3,4")
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_ON_NOT_REDERIVABLE", "flag")  # a word, and rightly not JSON
    with pytest.raises(InvalidSettings) as refused:
        VerificationSettings()
    assert str(refused.value) == "ITEMSMITH_REDERIVATION_SMALL_SIZE: not JSON ('3,4')"


def test_a_renamed_variable_is_read_with_a_warning_and_the_new_name_wins(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("ITEMSMITH_REDERIVATION_ENABLED", raising=False)
    monkeypatch.setenv("ITEMSMITH_REDERIVATION", "false")
    monkeypatch.setattr("itemsmith.layer_settings._warned", set())
    with caplog.at_level(logging.WARNING, logger="itemsmith.settings"):
        assert VerificationSettings().rederivation.enabled is False  # not read as the section's value
    assert "ITEMSMITH_REDERIVATION is renamed ITEMSMITH_REDERIVATION_ENABLED" in caplog.text
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_ENABLED", "true")
    assert VerificationSettings().rederivation.enabled is True


def test_the_command_line_reports_a_bad_variable_with_exit_code_1(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: object) -> None:
    monkeypatch.setenv("ITEMSMITH_DIVERSITY_EMBEDER", "off")
    result = CliRunner().invoke(app, ["bank", "list", "--db", f"sqlite:///{tmp_path}/bank.sqlite"])
    assert result.exit_code == 1, result.output
    assert "ITEMSMITH_DIVERSITY_EMBEDER: not a setting (did you mean ITEMSMITH_DIVERSITY_EMBEDDER?)" in result.output
