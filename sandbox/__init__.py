"""Running untrusted item templates: every template is treated as hostile code.

Public API
----------
- ``run_template(source, handler, *, num_samples=5, seed=0, limits=None) -> RunResult``
- ``SandboxPool(handler, *, workers=1, limits=None)`` with ``.run(source, *, num_samples, seed,
  limits) -> RunResult``, ``.features`` and ``.close()`` (a context manager)
- ``check_isolation(limits=None) -> LayerReport`` (the service's start-up check; raises
  ``IsolationUnavailable``), ``isolation_report`` (the same, cached, never raising for a missing layer)
- ``SandboxLimits`` (``wall_s`` 10, ``memory_mb`` 1024, ``output_bytes`` 4 MiB, ...; the
  environment's are ``SandboxSettings().sandbox``, from ``ITEMSMITH_SANDBOX_*``), ``RunResult``,
  ``SandboxError``

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
seeded ``random.Random``; ``random.Random(seed)`` makes more, and ``random.Random()`` without a
seed is seeded from the run's seed), ``statistics``, ``datetime``, ``synth`` (public callables of
``handlers.synthetic``), the item helpers ``mc_item``, ``tf_item``, ``pz_item``, ``series``,
``numeric_options``, ``date_options``, and common builtins (not ``id``; ``hash`` of values only).
``import`` works for numpy, pandas, math, random, statistics, datetime, itertools, functools,
collections, typing, string and re (all resolve to stand-ins). Same seed, same items: the worker
also fixes PYTHONHASHSEED and TZ and seeds the process-wide numpy and stdlib generators from the
run's seed (library code such as ``DataFrame.sample()`` draws from them); the clock readers
(``now``, ``today``, ``utcnow``) and unseeded entropy (``np.random.seed()``,
``NormalDist.samples()`` without ``seed=``) are denied, and no "now"/"today" reaches numpy or
pandas in any form they parse (``sandbox.clock``: any str/bytes type, arrays of any shape and
string dtype, pandas string/object/categorical data, NUL-padded or truncated text; as call
arguments, the object called, what a template's callbacks, ``__str__``/``__iter__`` return or
yield, lazy iterators, setitem, subscript keys, comparisons with datetime values, builtins or
partials handed a numpy/pandas callable, and sorted/min/max/statistics ordering datetime values).

Layer 1: policy (``sandbox.policy``, ``sandbox.proxies``, ``sandbox.dispatch``, ``sandbox.clock``) - in the child
--------------------------------------------------------------------------------------------
RestrictedPython compilation with every guard (``_getattr_``, ``_getitem_``, ``_write_``,
``_getiter_``, ``_inplacevar_``, unpacking, ``_print_``, guarded builtins), extended so that
``obj.n += 1``, ``d[k] += 1``, ``super().__init__()`` and small classes work (``__init__`` through
``super()`` only for a template's own objects: ``super(pd.Series, s).__init__`` is refused like any
dunder). Every call is compiled to ``_call_(f, ...)``, every comparison to ``_compare_``,
every ``return``/``yield`` through ``_returned_`` (the clock guard), and every function and
lambda checks its parameters on entry, so each value crossing from library code into template
code is checked, not only attribute reads:
call results, iteration, subscripts, callback arguments, ``with ... as``, decorators. A value
is refused (at any depth of exact containers, object arrays and pandas objects, walked
iteratively with the base type's own iteration) when it is a module, frame, code object, a
callable whose name starts with "_" (bound dunders such as ``NDFrame.__array_ufunc__``), a
denied builtin or a function of a denied module; object-dtype arrays and pandas objects may not
hold functions, and no object array may be a ufunc's ``out``.

Stops: names starting with "_" anywhere (dunder walks, ``__import__``, ``__globals__``,
``__subclasses__``), frame/generator/traceback walking (``gi_frame``, ``tb_frame``, ...),
imports outside the allow-list (refused at compile time), ``exec``/``eval``/``compile``/``open``/
``type``/``vars``/``globals`` (not in the builtins), every module object (templates hold
allow-listed stand-ins; module values, frames and code objects are refused by the attribute and
item guards), numpy/pandas file, network and pickle APIs (``read_*``, ``to_*`` except in-memory
ones, ``load``/``save``/``tofile``/``dump(s)``, ``DataSource``, ``to_string(buf=...)``), pandas
expression evaluation and string dispatch (``eval``, ``query``; one canonical check,
``dispatch.check_func_spec``, for ``agg``/``aggregate``/``apply``/``transform`` on Series,
DataFrames, groupby, rolling, expanding, ewm and resample objects, named aggregation keywords,
``pipe``/``map`` and ``pivot_table``/``crosstab``'s ``aggfunc``: only allow-listed names such as
"mean", in exact ``str``/``list``/``tuple``/``dict`` containers - a numpy array, deque,
``pd.Index`` or a list/dict subclass with a lying ``__iter__``/``values()`` is refused - pandas
otherwise falls back to ``getattr(obj, name)``/``getattr(numpy, name)``; no alternative engines
and no plotting ``backend=`` on any call; ``rolling(win_type=...)`` only real window names, as
exact strings; no ``plot``/``style`` backends), raw memory (``ndarray.ctypes``/``data``/``resize``/``setflags``/``flags``, calling
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

Layer 2: isolation (``sandbox.isolation``, ``sandbox.namespaces``, ``sandbox.landlock``, ``sandbox.zygote``)
--------------------------------------------------------------------------------------------------------
The service never forks itself: a pool starts workers ("zygotes") with ``subprocess`` as fresh
interpreters with a scrubbed environment (no API keys or secrets: PATH, LANG, TZ, thread
counts, PYTHONHASHSEED only), cwd "/", no inherited fds. A zygote enters empty network and IPC
namespaces (and each child an IPC namespace of its own), a private mount namespace and a PID namespace whose init mounts its own /proc, builds
read-only filesystem views (a tmpfs holding binds of the allowed paths only), preloads
numpy/pandas/RestrictedPython/the helpers and the handler's data (a user's handler file is run in
a hardened child of its own whose view holds a copy of the handler's folder - so the file must
sit in a folder of its own, not /, /tmp, /root, ... - and comes back as a pickle-free snapshot,
every byte of it decoded once, under that child's memory limit),
compiles the seccomp filter to BPF once, and keeps two *spare* children forked and hardened
ahead of requests; a spare runs a trusted warm-up at SCHED_IDLE while it waits (SIGUSR1 from the
worker cuts it short when the request arrives). Each child, before reading its template:
PR_SET_PDEATHSIG, every other fd closed, rlimits, a pivot into its filesystem view, no_new_privs,
Landlock, no capabilities in any set (bounding and ambient included, securebits locked), a uid
of the run's own (``uid_base`` + its host pid), not dumpable, and a seccomp deny-list (processes,
exec, sockets, ptrace, signals, namespaces/mounts, keyrings, bpf, io_uring, SysV IPC, message
queues, sysinfo, memfd_secret, PR_SET_DUMPABLE, F_SETOWN, and what Landlock does not cover:
xattrs, chmod/chown/utime, links/readlink, O_PATH). The layers and what each one stops
on its own are listed in ``sandbox.layers`` and docs/operator.md ("Sandbox layers"). The zygote
SIGKILLs a child at the wall-clock limit or past the output cap and reports how it ended; the
child's result is one frame sealed with a per-run key (``sandbox.protocol``), anything else is a
protocol violation; every child is discarded after one run.
Stops: every file outside the view (secrets, the database, other uploads, /proc of the host),
every file write, metadata changes, network access, new processes, signals/ptrace to other
processes, the service's environment (never inherited), interference between runs, native
crashes, infinite loops (SIGKILL), memory bombs, fork bombs.
Does not stop: reading files inside the view (the Python installation and the project's code),
kernel exploits through the allowed syscalls, CPU/cache side channels, a template that uses its
full time/memory budget every run (bounded, not prevented), threads (allowed by seccomp, bounded
by RLIMIT_NPROC/CPU/AS, unreachable from the policy layer), and a full escape forging a result
it could also have returned (see docs/operator.md).
Fail closed: a worker refuses to start without ``SandboxLimits.required_layers`` (default: all),
raising ``IsolationUnavailable`` (the service answers 503 and ``itemsmith serve`` exits), unless
``allow_degraded`` (local development; the missing layers are logged). Needs root (or the
container configuration in docker-compose.yml), Linux >= 5.13 for Landlock (6.x for its net/scope
rules) and pidfd support.

Layer 3: output (``sandbox.output``, ``sandbox.results``)
-------------------------------------------------------
The child converts the result to JSON with exact-type checks (dict/list/str/int/float/bool/
None; numpy scalars and numeric arrays converted; anything else refused without calling its
methods) under a size cap (4 MiB) and depth limit; strict JSON: integers within 64 bits, no
control characters or lone surrogates in any string (a clear "rejected" naming the path, never
an internal error); error and printed text are cleaned instead. The host re-parses it with a
size cap, re-checks the same (no NaN/Infinity), validates the envelope and every item with
``items.schema.Item`` (which caps channels, points, label and text lengths).
Hostile ``__eq__``/``__hash__``/``__str__`` never reach the host: only JSON does.

Plots (``sandbox.render``): the service never draws an item itself. ``render_item_png(item)``
sends it to a limited plot worker process (scrubbed environment, address-space, CPU and
file-size limits, a wall-clock deadline; killed and replaced on any failure), which validates
it again and draws labels as plain text (no mathtext).
"""

from itemsmith.sandbox.executor import (
                                        LayerReport,
                                        SandboxError,
                                        SandboxPool,
                                        check_isolation,
                                        get_pool,
                                        isolation_report,
                                        run_template,
)
from itemsmith.sandbox.layers import ALL_LAYERS, IsolationUnavailable
from itemsmith.sandbox.models import RunResult
from itemsmith.sandbox.settings import SandboxLimits, SandboxSettings

__all__ = ["ALL_LAYERS", "IsolationUnavailable", "LayerReport", "RunResult", "SandboxError", "SandboxLimits",
           "SandboxPool", "SandboxSettings", "check_isolation", "get_pool", "isolation_report", "run_template"]
