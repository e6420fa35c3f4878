"""The item audit: can a template's items be answered without the data?

Public API
----------
- ``AuditConfig``: thresholds (pydantic-settings, env prefix ``ITEMSMITH_AUDIT_``); the
  report lists any set laxer than the defaults.
- ``audit_items(draws, config) -> AuditReport``: pure, over items already drawn
  (``ItemDraw(seed, num_samples, items)``); never runs template code.
- ``audit_template(source, handler, *, config=None, pool=None, limits=None) -> AuditReport``:
  draws a few hundred items over fresh OS-random seeds and sizes through the sandbox, checks
  determinism across two sandbox processes, then calls ``audit_items``; a blind solver that wins
  must win again with fresh seeds added (``confirm_rejection``).

Blind solvers (``solvers``) answer from the question and option texts only, are fitted on
the seeds drawn before and scored on the next one; each one's accuracy is tested against
chance (exact Poisson-binomial) with Holm's correction over the solvers. Besides the named cues
they include one learned over generic option features (``learned``). Item checks (``item_checks``)
cover distinct and repeated items, distinct series, option counts, distinct options, keys that
agree across runs, options the question's own wording rules out, options that say the same thing,
dates the text names that are the ones shown (``dates``), keys that are the asked statistic of a
series shown read from the printed question, and no other option also right (``recompute``). Data
fidelity (``fidelity``) traces every channel shown to the named records' columns at its timestamps,
read in the sandbox (``record_data``), with its name and unit (``units``), or recomputes its
declared ``derived=`` recipe (``recipes``, ``readings``). A failed report's ``feedback`` names each
shortcut or failed check and its fix, for the template's author (docs/audit.md).
"""

from itemsmith.verification.audit.core import audit_items, confirm_rejection
from itemsmith.verification.audit.models import AuditReport, Finding, ItemDraw, SolverResult
from itemsmith.verification.audit.sandboxed import audit_template
from itemsmith.verification.seeds import fresh_seed
from itemsmith.verification.settings import AuditConfig

__all__ = ["AuditConfig", "AuditReport", "Finding", "ItemDraw", "SolverResult", "audit_items", "audit_template",
           "confirm_rejection", "fresh_seed"]
