"""The sandbox layer's settings: the limits of template runs (``ITEMSMITH_SANDBOX_*``) and of the
plot worker (``ITEMSMITH_RENDER_*``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from itemsmith.layer_settings import LayerSettings
from itemsmith.sandbox.layers import ALL_LAYERS, check_layer_names

__all__ = ["RenderLimits", "SandboxLimits", "SandboxSettings"]

MIB = 1024 * 1024


class SandboxLimits(BaseModel):
    """Limits applied to every sandboxed template run (and to loading a user's handler file).

    The defaults are safe for item templates: 10 s wall clock, 1 GiB of memory on top of the
    preloaded interpreter, no file writes, no new processes, 4 MiB of output.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(10.0, gt=0, le=600, description="wall-clock limit; the child is SIGKILLed")
    cpu_s: int | None = Field(None, gt=0, le=600, description="RLIMIT_CPU; default: wall_s + 1")
    memory_mb: int = Field(1024, ge=64, le=65536, description="address space allowed beyond the preloaded interpreter")
    output_bytes: int = Field(4 * MIB, ge=1024, le=64 * MIB, description="cap on the JSON output of one run")
    print_bytes: int = Field(64 * 1024, ge=0, le=MIB, description="cap on captured print() output")
    source_bytes: int = Field(256 * 1024, ge=1024, le=4 * MIB, description="cap on template source size")
    max_open_files: int = Field(64, ge=16, le=4096, description="RLIMIT_NOFILE")
    max_processes: int = Field(64, ge=1, le=4096, description="RLIMIT_NPROC (counted for the sandbox uid)")
    max_samples: int = Field(1000, ge=1, le=100000, description="largest num_samples a run may ask for")
    # Loading a user's handler file: runs once per handler, in its own hardened child.
    handler_load_s: float = Field(120.0, gt=0, le=3600, description="how long loading a handler file may take")
    handler_memory_mb: int = Field(4096, ge=256, le=262144,
                                   description="memory of the child that loads a handler file, and of the worker "
                                               "decoding the data it returns")
    handler_snapshot_bytes: int = Field(512 * MIB, ge=MIB, le=16 * 1024 * MIB,
                                        description="cap on the snapshot of a handler's data served to templates")
    handler_max_records: int = Field(100_000, ge=1, description="most records a handler may have")
    # OS isolation layers (see sandbox.layers): a worker refuses to start unless every required
    # layer is active, except with allow_degraded (local development only: the missing layers
    # are reported, never silently skipped).
    required_layers: tuple[str, ...] = Field(ALL_LAYERS, description="layers a worker must have to start")
    disabled_layers: tuple[str, ...] = Field((), description="layers never applied (diagnostics and tests)")
    allow_degraded: bool = Field(False, description="start with whatever layers the machine provides "
                                                    "(local development only)")
    # Each run drops to uid_base + (its host pid % uid_count): runs alive at the same time never
    # share a uid when uid_count >= /proc/sys/kernel/pid_max (and no file is owned by these uids).
    uid_base: int = Field(1_000_000, ge=1, le=2**31, description="first uid of template runs")
    uid_count: int = Field(4_194_304, ge=1, le=2**30, description="how many uids runs are spread over")
    startup_s: float = Field(180.0, gt=0, description="how long a worker may take to start")
    debug: bool = Field(False, description="the sandbox workers' stderr goes to the service's (diagnostics)")
    spare_warmup: bool = Field(True, description="pre-run trusted warm-up code in each waiting spare child "
                                                 "(fewer copy-on-write faults on the request path)")

    @field_validator("required_layers", "disabled_layers")
    @classmethod
    def _known_layers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_layer_names(value)

    def run_uid(self, host_pid: int) -> int:
        return self.uid_base + host_pid % self.uid_count

    @property
    def effective_cpu_seconds(self) -> int:
        if self.cpu_s is not None:
            return self.cpu_s
        return int(self.wall_s) + 1

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * MIB


class RenderLimits(BaseModel):
    """Limits of the plot worker (`itemsmith.sandbox.render`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(30.0, gt=0, le=600, description="wall-clock limit of one plot; the worker is killed")
    cpu_s: int = Field(20, gt=0, le=600, description="CPU seconds one plot may use (RLIMIT_CPU)")
    memory_mb: int = Field(512, ge=64, le=16384, description="address space beyond the preloaded worker")
    max_png_bytes: int = Field(16 * MIB, ge=MIB, description="largest PNG accepted from the worker")
    startup_s: float = Field(120.0, gt=0, description="how long the worker may take to start")


class SandboxSettings(LayerSettings):
    """The sandbox layer's settings, read from the environment."""

    sandbox: SandboxLimits = Field(default_factory=SandboxLimits, description="template runs and handler loads")
    render: RenderLimits = Field(default_factory=RenderLimits, description="the plot worker")
