"""The provider registry: specs and what a request may name (`SpecPolicy`), named endpoints and
their keys, call policies per provider, keys, local models, scripted replays and their folder."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import SecretStr, ValidationError

from itemsmith.agents.errors import LocalModelUnavailable, ProviderCallError, ProviderConfigError
from itemsmith.agents.llm import providers as providers_module
from itemsmith.agents.llm.catalog import entry_for
from itemsmith.agents.llm.inference import RetryPolicy, complete
from itemsmith.agents.llm.providers import (
    PROVIDERS,
    Provider,
    SpecPolicy,
    check_spec,
    make_model,
    register_provider,
    spec_pattern,
)
from itemsmith.agents.llm.providers import local as local_models
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import DEFAULT_LOCAL_GENERATOR, AgentSettings, ModelEndpoint
from itemsmith.layer_settings import InvalidSettings
from itemsmith.registry import DuplicateNameError, Registry

SERVICE = SpecPolicy.service(["openai", "anthropic", "openai_compatible", "local", "scripted"])


def as_spec(text: str) -> ModelSpec:
    """A spec as it enters (the request models, the command line's options and the settings parse it)."""
    return ModelSpec.parse(text)


def test_spec_parsing() -> None:
    assert ModelSpec.parse("openai:gpt-4o") == ModelSpec(provider="openai", model="gpt-4o")
    spec = ModelSpec.parse("openai_compatible:qwen2.5@http://127.0.0.1:8000/v1")
    assert (spec.model, spec.base_url, spec.endpoint) == ("qwen2.5", "http://127.0.0.1:8000/v1", None)
    assert str(spec) == "openai_compatible:qwen2.5@http://127.0.0.1:8000/v1"
    named = ModelSpec.parse("openai_compatible:qwen2.5@vllm")
    assert (named.model, named.endpoint, named.base_url, str(named)) == ("qwen2.5", "vllm", None,
                                                                         "openai_compatible:qwen2.5@vllm")
    for bad in ("gpt-4o", "openai:", "openai_compatible:qwen", "openai_compatible:q@localhost:8000",
                "openai_compatible:q@ftp://host/v1", "openai_compatible:@vllm", "openai_compatible:q@../x"):
        with pytest.raises(ProviderConfigError):
            ModelSpec.parse(bad)
    with pytest.raises(ProviderConfigError, match="credentials") as info:
        ModelSpec.parse("openai_compatible:q@http://user:sk-secret-123@host/v1")
    assert "sk-secret-123" not in str(info.value)


# --- what a request may name ------------------------------------------------------------------


def _endpoints(**named: dict) -> AgentSettings:
    return AgentSettings(endpoints={name: ModelEndpoint(**config) for name, config in named.items()})


def test_a_service_request_names_endpoints_never_urls() -> None:
    settings = _endpoints(vllm={"base_url": "http://vllm:8000/v1"})
    for url in ("http://127.0.0.1:9/v1", "https://169.254.169.254/latest", "http://vllm:8000/v1"):
        with pytest.raises(ProviderConfigError, match="never by URL.*configured: vllm"):
            check_spec(as_spec(f"openai_compatible:m@{url}"), SERVICE, settings)
    with pytest.raises(ProviderConfigError, match="no model endpoint named 'other'.*configured: vllm"):
        check_spec(as_spec("openai_compatible:m@other"), SERVICE, settings)
    with pytest.raises(ProviderConfigError, match="none is configured"):
        check_spec(as_spec("openai_compatible:m@vllm"), SERVICE, AgentSettings())
    assert check_spec(as_spec("openai_compatible:m@vllm"), SERVICE, settings).endpoint == "vllm"
    # the command line (the operator) may still type a URL
    assert check_spec(as_spec("openai_compatible:m@http://127.0.0.1:9/v1"), SpecPolicy.operator(), settings).base_url
    with pytest.raises(ProviderConfigError, match="not enabled"):
        check_spec(as_spec("scripted:x.json"), SpecPolicy.service(["openai"]), settings)
    with pytest.raises(ProviderConfigError, match="unknown provider"):
        check_spec(as_spec("nosuch:model"), SERVICE, settings)


def test_endpoints_come_from_the_environment_and_carry_no_credentials_in_the_url(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_ENDPOINTS", json.dumps(
        {"vllm": {"base_url": "http://vllm:8000/v1", "api_key_env": "VLLM_KEY", "timeout_s": 600, "max_retries": 1}}))
    monkeypatch.setenv("VLLM_KEY", "sk-vllm-key")
    endpoint = AgentSettings().endpoints["vllm"]
    assert (endpoint.base_url, endpoint.timeout_s, endpoint.max_retries) == ("http://vllm:8000/v1", 600, 1)
    assert endpoint.api_key() == SecretStr("sk-vllm-key")
    for bad in ({"base_url": "http://u:p@vllm/v1"}, {"base_url": "http://vllm/v1?key=x"}, {"base_url": "file:///x"},
                {"base_url": "http://vllm/v1", "api_key": "sk-inline"}, {"base_url": "http://vllm/v1",
                                                                         "api_key_env": "NOT A NAME"}):
        with pytest.raises(ValidationError):
            ModelEndpoint(**bad)
    monkeypatch.setenv("ITEMSMITH_ENDPOINTS", json.dumps({"bad name!": {"base_url": "http://vllm/v1"}}))
    with pytest.raises(InvalidSettings, match="ITEMSMITH_ENDPOINTS: "):
        AgentSettings()


def test_an_endpoint_whose_key_variable_is_unset_is_refused_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_KEY", raising=False)
    settings = _endpoints(vllm={"base_url": "http://127.0.0.1:9/v1", "api_key_env": "VLLM_KEY"})
    with pytest.raises(ProviderConfigError, match="VLLM_KEY"):
        make_model(as_spec("openai_compatible:m@vllm"), settings=settings)


# --- a real OpenAI-compatible listener: who gets which key, timeouts and retries --------------


@dataclass
class Listener:
    port: int = 0
    delay_s: float = 0.0
    authorizations: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@pytest.fixture
def listener() -> Iterator[Listener]:
    """A chat-completions server that records the Authorization header of every request and
    answers after `delay_s`."""
    state = Listener()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's name
            self.rfile.read(int(self.headers.get("content-length", "0")))
            state.authorizations.append(self.headers.get("authorization", ""))
            time.sleep(state.delay_s)
            reply = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": "pong"}}]}).encode()
            try:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
            except OSError:  # the client gave up (a timeout under test)
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state
    server.shutdown()
    server.server_close()


def test_only_a_configured_endpoint_receives_a_key_and_only_its_own(listener: Listener,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_KEY", "sk-vllm-only")
    settings = AgentSettings(openai_api_key=SecretStr("sk-operator-openai"), endpoints={
        "vllm": ModelEndpoint(base_url=listener.base_url, api_key_env="VLLM_KEY"),
        "open": ModelEndpoint(base_url=listener.base_url)})
    assert make_model(as_spec("openai_compatible:m@vllm"), settings=settings).model.invoke("ping").content == "pong"
    assert make_model(as_spec("openai_compatible:m@open"), settings=settings).model.invoke("ping").content == "pong"
    # a URL typed at the command line reaches the server without any key of this machine
    assert make_model(as_spec(f"openai_compatible:m@{listener.base_url}"), settings=settings).model.invoke("p").content
    assert listener.authorizations == ["Bearer sk-vllm-only", "Bearer not-needed", "Bearer not-needed"]


def test_a_slow_endpoint_gets_its_own_timeout_and_a_timed_out_call_is_not_sent_again(listener: Listener) -> None:
    listener.delay_s = 1.0
    fast_retry = RetryPolicy(max_retries=3, initial_s=0.0, max_s=0.0)

    def call(**policy: object) -> str:
        settings = AgentSettings(endpoints={"slow": ModelEndpoint(base_url=listener.base_url, **policy)})
        handle = make_model(as_spec("openai_compatible:m@slow"), settings=settings)
        reply, _ = asyncio.run(complete(handle, [HumanMessage("long prompt")], retry=fast_retry))
        return str(reply.content)

    with pytest.raises(ProviderCallError, match="not retried"):
        call(timeout_s=0.3)  # the built-in policy of openai_compatible: a timed-out call is final
    assert len(listener.authorizations) == 1
    listener.authorizations.clear()
    with pytest.raises(ProviderCallError, match="retries exhausted"):
        call(timeout_s=0.3, max_retries=2, retry_timeouts=True)  # what the old default did: the same prompt again
    assert len(listener.authorizations) == 3
    listener.authorizations.clear()
    assert call(timeout_s=5) == "pong" and len(listener.authorizations) == 1


def test_call_policies_per_provider_and_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = AgentSettings()
    openai, compatible, local = (settings.call_policy(p) for p in ("openai", "openai_compatible", "local"))
    assert (openai.timeout_s, openai.max_retries, openai.retry_timeouts) == (120.0, None, True)
    assert (compatible.timeout_s, compatible.max_retries, compatible.retry_timeouts) == (600.0, 1, False)
    assert local.timeout_s == settings.local_timeout_s
    monkeypatch.setenv("ITEMSMITH_PROVIDER_CALLS", json.dumps({"openai": {"timeout_s": 30, "max_retries": 5},
                                                               "openai_compatible": {"timeout_s": 900}}))
    settings = AgentSettings(openai_api_key=SecretStr("sk-x"))
    handle = make_model(as_spec("openai:gpt-4o"), settings=settings)
    assert (handle.timeout_s, handle.max_retries, handle.model.request_timeout) == (30, 5, 30)
    endpoint = ModelEndpoint(base_url="http://127.0.0.1:9/v1", max_retries=0, max_concurrency=1)
    policy = settings.call_policy("openai_compatible", endpoint)
    assert (policy.timeout_s, policy.max_retries, policy.retry_timeouts) == (900, 0, False)
    settings = settings.model_copy(update={"endpoints": {"one": endpoint}})
    assert make_model(as_spec("openai_compatible:m@one"), settings=settings).max_concurrency == 1


# --- scripted replies only from the scripts folder --------------------------------------------


def test_scripted_models_read_only_inside_the_scripts_folder(tmp_path: Path) -> None:
    folder, outside = tmp_path / "scripts", tmp_path / "secret.json"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "ok.json").write_text(json.dumps({"replies": ["fine"]}))
    outside.write_text(json.dumps({"replies": ["leaked"]}))
    (folder / "link.json").symlink_to(outside)
    (folder / "dirlink").symlink_to(tmp_path)
    settings = AgentSettings(scripted_dir=folder)
    handle = make_model(as_spec("scripted:sub/ok.json"), settings=settings, policy=SERVICE)
    assert handle.model.invoke("x").content == "fine"
    assert check_spec(as_spec(f"scripted:{folder / 'sub' / 'ok.json'}"), SERVICE, settings)  # absolute, but inside
    for name in (str(outside), "../secret.json", "sub/../../secret.json", "link.json", "dirlink/secret.json",
                 "/etc/passwd"):
        for policy in (SERVICE, SpecPolicy.operator()):  # a configured folder binds the command line too
            with pytest.raises(ProviderConfigError, match="outside the scripts folder"):
                make_model(as_spec(f"scripted:{name}"), settings=settings, policy=policy)
    with pytest.raises(ProviderConfigError, match="no script file"):
        make_model(as_spec("scripted:missing.json"), settings=settings, policy=SERVICE)
    with pytest.raises(ProviderConfigError, match="ITEMSMITH_SCRIPTED_DIR"):  # a service without a folder: none
        check_spec(as_spec(f"scripted:{folder / 'sub' / 'ok.json'}"), SERVICE, AgentSettings())


def test_registry_has_every_provider() -> None:
    assert {"openai", "anthropic", "openai_compatible", "local", "scripted"} <= set(PROVIDERS)
    with pytest.raises(ProviderConfigError, match="unknown provider"):
        make_model(as_spec("nosuch:model"))


def test_hosted_providers_need_keys_and_never_show_them() -> None:
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        make_model(as_spec("openai:gpt-4o"), settings=AgentSettings())
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        make_model(as_spec("anthropic:claude-sonnet-4-5"), settings=AgentSettings())
    secret = "sk-test-" + "x" * 24
    settings = AgentSettings(openai_api_key=SecretStr(secret), anthropic_api_key=SecretStr(secret))
    for spec in ("openai:gpt-4o", "anthropic:claude-sonnet-4-5", "openai_compatible:m@http://127.0.0.1:9/v1"):
        handle = make_model(as_spec(spec), settings=settings)
        assert secret not in repr(handle.model) and secret not in str(settings)
    assert make_model(as_spec("openai:gpt-4o"), settings=settings).model.max_retries == 0  # our retry layer only


def test_default_generator_follows_the_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    assert AgentSettings().default_generator() == DEFAULT_LOCAL_GENERATOR
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert AgentSettings().default_generator().provider == "anthropic"
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert AgentSettings().default_generator().provider == "openai"
    monkeypatch.setenv("ITEMSMITH_GENERATOR", "local:qwen2.5-coder-0.5b")
    assert str(AgentSettings().default_generator()) == "local:qwen2.5-coder-0.5b"


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
    handle = make_model(as_spec(f"scripted:{script}"))
    assert isinstance(handle.model, ScriptedChatModel)
    assert [handle.model.invoke("hi").content for _ in range(3)] == ["one", "two", "two"]
    with pytest.raises(ProviderConfigError, match="no script file"):
        make_model(as_spec(f"scripted:{tmp_path / 'missing.json'}"))


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


def test_the_spec_pattern_of_a_service_is_what_check_spec_accepts_of_its_text(tmp_path: Path) -> None:
    """`spec_pattern` describes a service's specs in its API description: a text it matches passes
    `check_spec` under the same policy, and the texts it refuses are refused (or not specs at all)."""
    import re

    from itemsmith.agents.llm.providers import spec_pattern

    (tmp_path / "replies.json").write_text("[]")
    settings = AgentSettings(endpoints={"vllm": ModelEndpoint(base_url="http://127.0.0.1:9/v1")},
                             scripted_dir=tmp_path)
    policy = SpecPolicy.service(["openai", "local", "openai_compatible", "scripted"])
    pattern = spec_pattern(policy, settings)
    accepted = ["openai:gpt-4o", "openai:qwen2.5:7b", "local:smollm2-135m", "openai_compatible:m@vllm",
                "scripted:replies.json"]
    refused = ["anthropic:claude-sonnet-4-5", "local:nosuch", "openai_compatible:m@other",
               "openai_compatible:m@http://127.0.0.1:9/v1", "scripted:other.json", " openai:gpt-4o", "openai:a b",
               "openai:\x85", "openai:"]
    for text in accepted:
        assert re.fullmatch(pattern, text), text
        check_spec(ModelSpec.parse(text), policy, settings)
    for text in refused:
        assert not re.fullmatch(pattern, text), text


class EchoProvider(Provider):
    """A provider written outside the package: a fixed reply (no network), two calls at once."""

    name = "echo"
    max_concurrency = 2

    def chat_model(self, spec, options, settings, calls, capabilities):
        return GenericFakeChatModel(messages=iter([AIMessage(f"{spec.model} says hi")]))


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    """A copy of the registry, so a provider registered by a test is gone after it."""
    copy: Registry = Registry("provider", unknown_error=ProviderConfigError)
    for name in PROVIDERS:
        copy.add(name, PROVIDERS[name])
    monkeypatch.setattr(providers_module, "PROVIDERS", copy)
    return copy


def test_a_provider_registered_by_its_class_is_built_with_its_policy_limit_and_capabilities(registry: Registry) -> None:
    register_provider(EchoProvider)
    settings = AgentSettings(provider_calls={"echo": {"timeout_s": 7, "max_retries": 1}})
    handle = make_model(as_spec("echo:parrot"), settings=settings)
    assert (handle.provider, handle.name, handle.timeout_s, handle.max_retries) == ("echo", "parrot", 7, 1)
    assert handle.max_concurrency == 2 and handle.capabilities == entry_for("echo", "parrot").capabilities
    reply, _ = asyncio.run(complete(handle, [HumanMessage("hello")], retry=RetryPolicy(max_retries=0)))
    assert reply.content == "parrot says hi"
    assert "echo:" in spec_pattern(SpecPolicy.service(["echo"]), settings)


def test_a_provider_name_is_registered_once(registry: Registry) -> None:
    class Impostor(EchoProvider):
        name = "openai"

    with pytest.raises(DuplicateNameError, match="'openai' is registered twice"):
        register_provider(Impostor)


def test_an_unknown_provider_is_refused_with_the_closest_name() -> None:
    with pytest.raises(ProviderConfigError, match="did you mean 'openai'"):
        check_spec(as_spec("opnai:gpt-4o"), SpecPolicy.operator())


def test_checking_a_spec_of_a_real_provider_imports_no_langchain() -> None:
    """Checking a spec (a request's, a run's roles before any work) loads only that provider's
    module; LangChain and the SDKs come when a model is built. (A `scripted:` spec loads its
    provider's module, which is the LangChain model itself: tests only.)"""
    code = ("import sys\n"
            "from itemsmith.agents.llm.providers import SpecPolicy, check_spec, missing_credentials\n"
            "from itemsmith.agents.llm.spec import ModelSpec\n"
            "for text in ['openai:gpt-4o', 'anthropic:claude-sonnet-4-5', 'local:smollm2-135m',\n"
            "             'openai_compatible:m@http://127.0.0.1:1/v1']:\n"
            "    spec = ModelSpec.parse(text)\n"
            "    check_spec(spec, SpecPolicy.operator())\n"
            "    missing_credentials(spec)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('langchain', 'openai', 'anthropic'))))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]", result.stdout
