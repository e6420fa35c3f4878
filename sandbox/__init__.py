"""Running untrusted item templates: every template is treated as hostile code.

Public API
----------
- ``run_template(source, handler, *, num_samples=5, seed=0, limits=None) -> RunResult``
- ``SandboxPool(handler, *, workers=1, limits=None)`` with ``.run(source, *, num_samples, seed,
  limits) -> RunResult``, ``.features`` and ``.close()`` (a context manager)
- ``SandboxLimits`` (pydantic-settings, env prefix ``ITEMSMITH_SANDBOX_``: ``wall_s`` 10,
  ``memory_mb`` 1024, ``output_bytes`` 4 MiB, ...), ``RunResult``, ``SandboxError``

``RunResult.status`` is ``ok``, ``refused`` (the policy rejected the source before it ran),
``error`` (it raised, or crashed the interpreter), ``killed`` (a limit ended it: wall clock,
CPU, memory) or ``rejected`` (its output failed validation). ``error`` is one line meant as
feedback to the author, e.g. ``ZeroDivisionError: division by zero (template line 12: x = a / b)``.

What a template sees
--------------------
``handler`` (read-only: ``name``, ``description``, ``records()``, ``series(record_id)`` and the
aliases ``getDataframe``/``get_dataframe``/``query``; every call returns a fresh copy), ``rng``
(a numpy Generator seeded with the run seed; only its sampling methods), ``np`` and ``pd``
(allow-listed stand-ins; ``np.random`` is a seeded legacy generator), ``math``, ``random`` (a
seeded ``random.Random``), ``statistics``, ``datetime``, ``synth`` (public callables of
``handlers.synthetic``), the item helpers ``mc_item``, ``tf_item``, ``pz_item``, ``series``, and
common builtins. ``import`` works for numpy, pandas, math, random, statistics, datetime,
itertools, functools, collections, typing, string and re (all resolve to stand-ins). Same
seed, same items: the worker also fixes PYTHONHASHSEED and TZ.

Layer 1: policy (``sandbox.policy``, ``sandbox.proxies``, ``sandbox.dispatch``) - in the child
--------------------------------------------------------------------------------------------
RestrictedPython compilation with every guard (``_getattr_``, ``_getitem_``, ``_write_``,
``_getiter_``, ``_inplacevar_``, unpacking, ``_print_``, guarded builtins), extended so that
``obj.n += 1``, ``d[k] += 1``, ``super().__init__()`` and small classes work.

Stops: names starting with "_" anywhere (dunder walks, ``__import__``, ``__globals__``,
``__subclasses__``), frame/generator/traceback walking (``gi_frame``, ``tb_frame``, ...),
imports outside the allow-list (refused at compile time), ``exec``/``eval``/``compile``/``open``/
``type``/``vars``/``globals`` (not in the builtins), every module object (templates hold
allow-listed stand-ins; module values, frames and code objects are refused by the attribute and
item guards), numpy/pandas file, network and pickle APIs (``read_*``, ``to_*`` except in-memory
ones, ``load``/``save``/``tofile``/``dump(s)``, ``DataSource``, ``to_string(buf=...)``), pandas
expression evaluation and string dispatch (``eval``, ``query``; ``agg``/``apply``/``transform``/
``pipe``/``map`` and ``pivot_table``/``crosstab``'s ``aggfunc`` take only allow-listed names such
as "mean" - pandas otherwise falls back to ``getattr(numpy, name)``, e.g. ``np.fromfile``; no
alternative engines; ``rolling(win_type=...)`` only real window names; no ``plot``/``style``
backends), raw memory (``ndarray.ctypes``/``data``/``resize``/``setflags``/``flags``, calling
``np.ndarray(...)`` with buffer/offset/strides - measured: ``offset=-8`` reads out of bounds -
and ``as_strided``), ``str.format`` field walking (``"{0.__class__}"``, also through
``format_map``, ``str.format`` and pandas' ``float_format``), setting attributes on anything but
the template's own objects, plain containers and numpy/pandas data (``np.x = ...``,
``handler.name = ...``), global options (``pd.set_option``, ``np.seterr``), the RNG's internals
(``bit_generator``), ``AttributeError.obj``. Errors name the template's line and suggest the
right name (``rng.randint`` -> ``rng.integers``, ``pd.DateRange`` -> ``date_range``).
Does not stop: anything numpy/pandas C code does with the arguments it is given (a native
crash, a huge allocation, a C loop that never checks for signals), CPU or memory exhaustion,
output of any size or shape, and whatever public API of the allowed libraries was missed. It
narrows the surface; it is not the boundary.

Layer 2: isolation (``sandbox.isolation``, ``sandbox.landlock``, ``sandbox.zygote``)
--------------------------------------------------------------------------------
The service never forks itself: a pool starts workers ("zygotes") with ``subprocess`` as fresh
interpreters with a scrubbed environment (no API keys or secrets: PATH, LANG, TZ, thread
counts, PYTHONHASHSEED only), cwd "/", no inherited fds. A zygote enters empty network and IPC
namespaces, preloads numpy/pandas/RestrictedPython/the helpers and the handler's data (a user's
handler file is run in a hardened child of its own - read access to its folder added, so the
file must sit in a folder of its own, not /, /tmp, /root, ... - and comes back as a
pickle-free snapshot), compiles the seccomp filter to BPF once, and keeps two *spare* children
forked and hardened ahead of requests; a spare runs a trusted warm-up at SCHED_IDLE while it
waits (copy-on-write faults happen before the request; SIGUSR1 from the worker cuts it short
when the request arrives). Each child, before reading its template:
PR_SET_PDEATHSIG, every other fd closed, rlimits (address space = preloaded interpreter +
``memory_mb``; CPU; file size 0; open files; processes; no core dumps), no_new_privs, Landlock
(read-only, and only beneath the Python installation, site-packages, the project's packages,
shared libraries and zoneinfo: no /tmp, /home, /root, /etc, /proc or repository root; TCP
bind/connect denied; signals and abstract sockets scoped), uid/gid ``nobody`` with no groups and
no capabilities (except CAP_DAC_READ_SEARCH when the Python installation is unreadable for that
uid, e.g. under /root: reads still stay within Landlock's list), not dumpable, and a seccomp
deny-list (fork/vfork/clone of processes/clone3, execve(at), every socket call, ptrace,
process_vm_*, every signal-sending call, namespaces/mount, keyrings, bpf, perf, io_uring,
userfaultfd, module loading, open_by_handle_at, ...). The zygote SIGKILLs a child at the
wall-clock limit or past the output cap and reports how it ended (signal, timeout); every child
is discarded after one run.
Stops: file reads outside the list (secrets in files), every file write, network access, new
processes, signals/ptrace to other processes, the service's environment (never inherited),
interference between runs (handler data and global state a run changes die with its child),
native crashes, infinite loops (in C or Python, with swallowed exceptions or signal tampering:
SIGKILL), memory bombs, fork bombs.
Does not stop: reading files inside the allowed list (the Python installation and the
project's code), kernel exploits through the allowed syscalls, CPU/cache side channels, a
template that uses its full time/memory budget every run (bounded, not prevented), threads
(allowed by seccomp, bounded by RLIMIT_NPROC/CPU/AS, unreachable from the policy layer).
Without root the netns and uid steps are skipped: ``SandboxPool.features`` says which layers
are active, and ``SandboxLimits.required_features`` makes a worker refuse to start without
them. Needs Linux >= 5.13 for Landlock (6.x for its net/scope rules) and pidfd support.

Layer 3: output (``sandbox.output``, ``sandbox.results``)
-------------------------------------------------------
The child converts the result to JSON with exact-type checks (dict/list/str/int/float/bool/
None; numpy scalars and numeric arrays converted; anything else refused without calling its
methods) under a size cap (4 MiB) and depth limit. The host re-parses it with a size cap,
re-checks exact types (no NaN/Infinity), validates the envelope and every item with
``templates_bank.schema.Item``. Hostile ``__eq__``/``__hash__``/``__str__`` never reach the
host: only JSON does.
"""

from itemsmith.sandbox.executor import SandboxError, SandboxPool, get_pool, run_template
from itemsmith.sandbox.models import RunResult
from itemsmith.sandbox.settings import SandboxLimits

__all__ = ["RunResult", "SandboxError", "SandboxLimits", "SandboxPool", "get_pool", "run_template"]
