"""Jobs build their models under the request policy, not the operator's: a spec that names a URL
(queued before the API refused it, or written into the jobs table directly) never reaches it."""

from __future__ import annotations

import pytest

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.factory import build_judges, build_respondent, build_students
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.service.settings import ServiceSettings, request_policy

URL_SPEC = ModelSpec.parse("openai_compatible:m@http://127.0.0.1:9/v1")  # as a job request reads it


@pytest.mark.parametrize("build", [
    lambda policy: build_judges([URL_SPEC], policy=policy),
    lambda policy: build_students([StudentSpec.model_validate(f"{URL_SPEC}@1")], policy=policy),
    lambda policy: build_respondent(URL_SPEC, policy=policy),
])
def test_a_url_spec_is_refused_under_the_request_policy(build) -> None:
    with pytest.raises(ProviderConfigError, match="never by URL"):
        build(request_policy())


def test_the_request_policy_follows_the_enabled_providers() -> None:
    with pytest.raises(ProviderConfigError):
        build_judges([ModelSpec.parse("anthropic:claude-haiku-4-5")],
                     policy=request_policy(ServiceSettings(model_providers=["openai"])))
