"""The provider registry: specs, keys, local models, scripted replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from itemsmith.agents import local_models
from itemsmith.agents.errors import LocalModelUnavailable, ProviderConfigError
from itemsmith.agents.providers import PROVIDERS, ModelSpec, make_model
from itemsmith.agents.scripted import ScriptedChatModel
from itemsmith.agents.settings import DEFAULT_LOCAL_GENERATOR, AgentSettings


def test_spec_parsing() -> None:
    assert ModelSpec.parse("openai:gpt-4o") == ModelSpec(provider="openai", model="gpt-4o")
    spec = ModelSpec.parse("openai_compatible:qwen2.5@http://127.0.0.1:8000/v1")
    assert (spec.model, spec.base_url) == ("qwen2.5", "http://127.0.0.1:8000/v1")
    assert str(spec) == "openai_compatible:qwen2.5@http://127.0.0.1:8000/v1"
    for bad in ("gpt-4o", "openai:", "openai_compatible:qwen", "openai_compatible:q@localhost:8000"):
        with pytest.raises(ProviderConfigError):
            ModelSpec.parse(bad)


def test_registry_has_every_provider() -> None:
    assert {"openai", "anthropic", "openai_compatible", "local", "scripted"} <= set(PROVIDERS)
    with pytest.raises(ProviderConfigError, match="unknown provider"):
        make_model("nosuch:model")


def test_hosted_providers_need_keys_and_never_show_them() -> None:
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        make_model("openai:gpt-4o", settings=AgentSettings())
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        make_model("anthropic:claude-sonnet-4-5", settings=AgentSettings())
    secret = "sk-test-" + "x" * 24
    settings = AgentSettings(openai_api_key=SecretStr(secret), anthropic_api_key=SecretStr(secret))
    for spec in ("openai:gpt-4o", "anthropic:claude-sonnet-4-5", "openai_compatible:m@http://127.0.0.1:9/v1"):
        handle = make_model(spec, settings=settings)
        assert secret not in repr(handle.model) and secret not in str(settings)
    assert make_model("openai:gpt-4o", settings=settings).model.max_retries == 0  # our retry layer only


def test_default_generator_follows_the_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    assert AgentSettings().default_generator() == DEFAULT_LOCAL_GENERATOR
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert AgentSettings().default_generator().startswith("anthropic:")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert AgentSettings().default_generator().startswith("openai:")
    monkeypatch.setenv("ITEMSMITH_GENERATOR", "local:qwen2.5-coder-0.5b")
    assert AgentSettings().default_generator() == "local:qwen2.5-coder-0.5b"


def test_local_model_missing_packages_gives_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(local_models, "_package_dir", lambda module: None)
    with pytest.raises(LocalModelUnavailable, match=r"pip install 'itemsmith\[local\]'"):
        local_models.model_path("qwen2.5-coder-1.5b", tmp_path)
    with pytest.raises(LocalModelUnavailable, match="unknown local model"):
        local_models.model_path("gpt-17", tmp_path)


def test_split_model_is_assembled_verified_and_reused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parts = []
    for i, chunk in enumerate((b"GGUF", b"-part-two", b"-three")):
        folder = tmp_path / "site" / f"fake_part{i + 1}"
        (folder / "data").mkdir(parents=True)
        (folder / "data" / f"part{i + 1:02d}.bin").write_bytes(chunk)
        parts.append(f"fake_part{i + 1}")
    digest = local_models.sha256_of([tmp_path / "site" / m / "data" / f"part{i + 1:02d}.bin"
                                     for i, m in enumerate(parts)])
    fake = local_models.LocalModel(name="fake", sha256=digest, extra="local", description="", parts=tuple(parts))
    monkeypatch.setitem(local_models.LOCAL_MODELS, "fake", fake)
    monkeypatch.setattr(local_models, "_package_dir", lambda module: tmp_path / "site" / module)
    cache = tmp_path / "cache"
    path = local_models.model_path("fake", cache)
    assert path.read_bytes() == b"GGUF-part-two-three"
    monkeypatch.setattr(local_models, "sha256_of", lambda paths: pytest.fail("a verified file is not re-hashed"))
    assert local_models.model_path("fake", cache) == path

    bad = local_models.LocalModel(name="bad", sha256="0" * 64, extra="local", description="", parts=tuple(parts))
    monkeypatch.setitem(local_models.LOCAL_MODELS, "bad", bad)
    monkeypatch.undo()
    monkeypatch.setitem(local_models.LOCAL_MODELS, "bad", bad)
    monkeypatch.setattr(local_models, "_package_dir", lambda module: tmp_path / "site" / module)
    with pytest.raises(LocalModelUnavailable, match="sha256"):
        local_models.model_path("bad", cache)
    assert not (cache / "bad.gguf").exists()


def test_scripted_provider_from_a_file(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"replies": ["one", "two"]}))
    handle = make_model(f"scripted:{script}")
    assert isinstance(handle.model, ScriptedChatModel)
    assert [handle.model.invoke("hi").content for _ in range(3)] == ["one", "two", "two"]
    with pytest.raises(ProviderConfigError, match="no script file"):
        make_model(f"scripted:{tmp_path / 'missing.json'}")


def test_scripted_yaml_rules_route_by_prompt(tmp_path: Path) -> None:
    script = tmp_path / "replies.yaml"
    script.write_text("replies: [default]\nexhausted: error\nrules:\n  - match: 'Title: B'\n    replies: [b1, b2]\n")
    model = ScriptedChatModel.from_source(script)
    assert model.invoke("Title: B").content == "b1"
    assert model.invoke("Title: A").content == "default"
    assert model.invoke("Title: B").content == "b2"
    with pytest.raises(RuntimeError, match="ran out"):
        model.invoke("Title: B")
    assert model.calls == 4
