"""The plot worker's main loop (run as ``python -m itemsmith.sandbox.render_worker MEMORY_BYTES``).

Started by `itemsmith.sandbox.render`; reads frames (header: ``cpu_s``, ``dpi``; payload: one item as
JSON) on stdin and answers on the original stdout (header ``status`` ok/invalid/error, payload
the PNG). Everything else the process writes goes to stderr, so a stray print cannot corrupt
a frame. Limits are set after the trusted warm-up plot: address space, no file writes, and
per request the CPU time.
"""

from __future__ import annotations

import math
import os
import resource
import sys


def _vm_bytes() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    out = os.dup(1)
    os.dup2(2, 1)  # stray writes to stdout go to stderr
    from pydantic import ValidationError

    from itemsmith.items.plotting import plot_item
    from itemsmith.items.schema import Item, Series
    from itemsmith.sandbox.protocol import ProtocolError, read_frame, write_frame
    from itemsmith.sandbox.results import validation_message

    plot_item(Item(question="warm-up", options=["a", "b"], answer_index=0,
                   series=[Series(name="warm-up", values=[0.0, 1.0], unit="u")]))
    memory = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (_vm_bytes() + memory, resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    write_frame(out, {"status": "ready"})
    while True:
        try:
            header, payload = read_frame(0, max_payload=64 * 1024 * 1024)
        except ProtocolError:
            return
        cpu_s = header.get("cpu_s")
        if type(cpu_s) is int and cpu_s > 0:
            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(_cpu_used()) + cpu_s, hard))
        try:
            item = Item.model_validate_json(payload)
            if not item.series:
                write_frame(out, {"status": "invalid", "error": "the item has no series to plot"})
                continue
            dpi = header.get("dpi")
            png = plot_item(item, fmt="png", dpi=dpi if type(dpi) is int and 10 <= dpi <= 400 else 100)
        except ValidationError as exc:
            write_frame(out, {"status": "invalid", "error": f"the item cannot be plotted: {validation_message(exc)}"})
            continue
        except MemoryError:
            write_frame(out, {"status": "error", "error": "plot rendering exceeded its memory limit"})
            continue
        except RecursionError:
            write_frame(out, {"status": "error", "error": "plot rendering recursed too deeply"})
            continue
        except Exception as exc:  # noqa: BLE001 - any failure of one plot is reported, the worker goes on
            write_frame(out, {"status": "error", "error": f"plot rendering failed: {type(exc).__name__}: {exc}"[:400]})
            continue
        write_frame(out, {"status": "ok"}, png)


if __name__ == "__main__":
    main()
