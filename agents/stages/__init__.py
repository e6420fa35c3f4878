"""The verification stages as the authoring loop and `itemsmith verify` run them.

- ``verify``: the interface, `Verifier` -> `VerificationResult` (with its `Evidence`),
  `pass_through`, and `run_stages` (the stages in order, stopping at the first rejection).
- ``pipeline``: which stages a run runs with which models (`resolve_pipeline`, `Pipeline`,
  `StageInfo`, `authoring_models`, `check_models`) and the run header (`run_header`, `header_lines`).
- ``verification_stages``: the stages built over `itemsmith.verification` (item audit,
  re-derivation, judges, students, capability): `verification_stages`, `content_stages`,
  `rederivation_stage`, `build_review_models`, `ItemAuditVerifier`.
- ``rederivation``: `RederivationVerifier`, a solver model's programs recomputing the keys
  (`SOLVER_PROMPT_VERSION` names its prompt).
- ``template_verification``: `verify_template`, one existing template through the same stages
  (`TemplateVerification`).
- ``judge_validation``: a judge's measured separation (`measure_judge`, `record_validation`,
  `load_validations`, `validations_path`) and whether its scores decide (`advisory`).
- ``ladder_validation``: a student ladder's measured separation (`measure_ladder`,
  `record_ladder_validation`, `load_ladder_validations`) and whether a local one filters
  (`advisory_ladder`); ``validation_file``: the file both kinds of validation are kept in.

The stages call models through `itemsmith.agents.llm` and never import the authoring loop.
Names are imported lazily.
"""

from __future__ import annotations

from itemsmith.agents._lazy import exports, lazy_getattr

_MODULES = {
    "judge_validation": ("advisory", "load_validations", "measure_judge", "record_validation", "validations_path"),
    "ladder_validation": ("advisory_ladder", "load_ladder_validations", "measure_ladder", "record_ladder_validation"),
    "pipeline": ("Pipeline", "StageInfo", "authoring_models", "check_models", "header_lines", "resolve_pipeline",
                 "run_header"),
    "rederivation": ("SOLVER_PROMPT_VERSION", "RederivationVerifier"),
    "template_verification": ("TemplateVerification", "verify_template"),
    "verification_stages": ("ItemAuditVerifier", "build_review_models", "content_stages", "rederivation_stage",
                            "verification_stages"),
    "verify": ("Evidence", "VerificationResult", "Verifier", "pass_through", "run_stages"),
}
_EXPORTS = exports(__name__, _MODULES)

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
