"""`scripts/llama-cmake-args`: the llama.cpp build flags for the CPU it runs on, read from a
cpuinfo file (CPUINFO) instead of this machine's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llama-cmake-args"
PORTABLE = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
SAPPHIRE_RAPIDS = ("fpu sse2 avx avx2 fma f16c avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512vbmi "
                   "avx512_vnni avx512_bf16 avx_vnni amx_tile amx_int8 amx_bf16")


def _args(tmp_path: Path, flags: str, *extra: str) -> list[str]:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    done = subprocess.run(["sh", str(SCRIPT), *extra], env={"CPUINFO": str(cpuinfo), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_an_avx512_cpu_gets_each_kernel_family_it_has_and_never_native_or_amx(tmp_path: Path) -> None:
    args = _args(tmp_path, SAPPHIRE_RAPIDS)
    assert args == [*PORTABLE.split(), "-DGGML_AVX512=ON", "-DGGML_AVX512_VBMI=ON", "-DGGML_AVX512_VNNI=ON",
                    "-DGGML_AVX512_BF16=ON", "-DGGML_AVX_VNNI=ON"]
    assert not any("AMX" in a for a in args)


@pytest.mark.parametrize("flags", [
    "fpu sse2 avx avx2 fma f16c",  # AVX2 only
    "fpu sse2 avx avx2 fma f16c avx512f avx512cd avx512vl avx512dq",  # AVX-512 without BW: none of it
    "fpu avx2 fma f16c avx512_vnni avx512vbmi",  # extensions without the foundation
])
def test_a_cpu_without_the_whole_avx512_foundation_gets_the_portable_flags(tmp_path: Path, flags: str) -> None:
    assert _args(tmp_path, flags) == PORTABLE.split()


def test_avx_vnni_alone_is_used(tmp_path: Path) -> None:
    assert _args(tmp_path, "fpu avx2 fma f16c avx_vnni") == [*PORTABLE.split(), "-DGGML_AVX_VNNI=ON"]


def test_portable_ignores_the_cpu(tmp_path: Path) -> None:
    assert _args(tmp_path, SAPPHIRE_RAPIDS, "--portable") == PORTABLE.split()


def test_a_flag_is_matched_whole_not_as_a_prefix(tmp_path: Path) -> None:
    """avx512vbmi2 alone does not stand for avx512vbmi."""
    args = _args(tmp_path, "avx2 fma f16c avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi2")
    assert "-DGGML_AVX512=ON" in args and "-DGGML_AVX512_VBMI=ON" not in args
