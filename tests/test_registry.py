"""The one registry every "name -> thing" table uses (itemsmith.registry)."""

from __future__ import annotations

import pytest

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.providers import PROVIDERS, SpecPolicy, check_spec
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.handlers.loader import HandlerSourceError
from itemsmith.handlers.registry import BUILTIN_HANDLERS, get_builtin
from itemsmith.handlers.synthetic import GENERATORS
from itemsmith.registry import DuplicateNameError, LazyTarget, MissingExtraError, Registry, UnknownNameError
from itemsmith.service.jobs._kinds import JOB_KINDS
from itemsmith.templates_bank.exporters import EXPORTERS


def test_a_name_is_registered_once() -> None:
    colours: Registry[int] = Registry("colour")
    colours.add("red", 1)
    with pytest.raises(DuplicateNameError, match="colour 'red' is registered twice"):
        colours.add("red", 2)
    assert dict(colours) == {"red": 1}


def test_the_decorator_registers_what_make_builds_and_returns_the_decorated_object() -> None:
    shouts: Registry[str] = Registry("shout")

    @shouts.register("hello", lambda fn: fn().upper())
    def hello() -> str:
        return "hello"

    assert hello() == "hello" and shouts.resolve("hello") == "HELLO"
    with pytest.raises(DuplicateNameError):
        shouts.register("hello", str)(hello)


def test_an_unknown_name_lists_the_known_ones_and_the_closest() -> None:
    formats: Registry[str] = Registry("export format")
    for name in ("jsonl", "hf", "lm-eval"):
        formats.add(name, name)
    with pytest.raises(UnknownNameError) as caught:
        formats.resolve("jsnl")
    assert str(caught.value) == "unknown export format 'jsnl'; did you mean 'jsonl'? (known: hf, jsonl, lm-eval)"
    with pytest.raises(UnknownNameError) as far:
        formats.resolve("zzz")
    assert "did you mean" not in str(far.value)


def test_a_registry_raises_its_own_error_kind() -> None:
    handlers: Registry[int] = Registry("handler", unknown_error=HandlerSourceError)
    with pytest.raises(HandlerSourceError, match="unknown handler 'x'"):
        handlers.resolve("x")


def test_a_lazy_target_imports_on_load_and_names_the_extra_when_its_package_is_missing() -> None:
    assert LazyTarget("json:dumps").load()([1]) == "[1]"
    with pytest.raises(MissingExtraError, match=r"no_such_module_xyz.*pip install 'itemsmith\[local\]'"):
        LazyTarget("no_such_module_xyz:thing", extra="local").load()


def test_every_table_of_names_is_a_registry() -> None:
    for table in (BUILTIN_HANDLERS, EXPORTERS, JOB_KINDS, GENERATORS, PROVIDERS):
        assert isinstance(table, Registry) and len(table) > 0


def test_an_unknown_builtin_handler_suggests_the_closest_name() -> None:
    with pytest.raises(HandlerSourceError, match="did you mean 'weather'"):
        get_builtin("wether")


def test_an_unknown_provider_suggests_the_closest_name() -> None:
    with pytest.raises(ProviderConfigError, match="unknown provider 'opena'; did you mean 'openai'"):
        check_spec(ModelSpec.parse("opena:gpt-4o"), SpecPolicy.operator())
