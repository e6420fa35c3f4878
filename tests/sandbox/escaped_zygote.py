"""A worker (zygote) whose children run the request's source as plain, unrestricted Python.

This simulates a complete escape from the policy layer (a policy escape): everything
else - namespaces, views, uid, capabilities, Landlock, seccomp, rlimits, result sealing - is
the real worker's. The source must define `probe()`, returning something JSON can encode; the
child returns it as its envelope text (tests read it raw, or through the host's validation).
Started by tests/sandbox/test_os_layers.py in place of `python -m itemsmith.sandbox.zygote`.
"""

from __future__ import annotations

import json
from typing import Any

from itemsmith.sandbox import zygote
from itemsmith.sandbox.models import RunRequest


def run_unrestricted(self: zygote.Zygote, request: RunRequest) -> str:
    namespace: dict[str, Any] = {"__name__": "escaped_template"}
    exec(compile(request.source, "<escaped template>", "exec"), namespace)  # the simulated escape
    return json.dumps(namespace["probe"]())


zygote.Zygote.run_in_child = run_unrestricted  # type: ignore[method-assign]

if __name__ == "__main__":
    zygote.main()
