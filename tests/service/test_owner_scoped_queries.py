"""The owner-scoped lookups the API uses instead of its own SQL: another owner's banks and jobs
are never returned, whatever name or filter a caller gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemsmith.service.access import owned_bank_named, owned_banks, owned_releases
from itemsmith.service.jobs import create_job, jobs_on_bank, latest_request
from itemsmith.service.review import banks_with_version_counts
from itemsmith.templates_bank.storage import BankCreate, NotFoundError, create_bank, open_session, upgrade


def test_banks_and_jobs_are_scoped_to_their_owner(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:
        alices = create_bank(session, BankCreate(name="shared-name", handler="synthetic", owner="alice"))
        bobs = create_bank(session, BankCreate(name="shared-name", handler="synthetic", owner="bob"))
        create_bank(session, BankCreate(name="another", handler="synthetic", owner="alice"))
        for owner, bank, release in [("alice", alices, 1), ("alice", alices, 2), ("bob", bobs, 1)]:
            create_job(session, kind="export", owner=owner, bank_id=bank.id, request={"release": release})
        create_job(session, kind="author", owner="alice", bank_id=alices.id, request={"judges": ["a:first"]})
        create_job(session, kind="author", owner="alice", bank_id=alices.id, request={"judges": ["a:second"]})
        create_job(session, kind="author", owner="bob", bank_id=alices.id, request={"judges": ["b:intruder"]})

    with open_session(url) as session:
        assert [b.name for b in owned_banks(session, "alice")] == ["another", "shared-name"]
        assert owned_bank_named(session, "shared-name", "alice").id == alices.id
        assert owned_bank_named(session, "shared-name", "bob").id == bobs.id
        assert owned_bank_named(session, "another", "bob") is None
        assert len(jobs_on_bank(session, "alice", alices.id, "export")) == 2
        assert len(jobs_on_bank(session, "alice", alices.id, "export", release=2)) == 1
        assert jobs_on_bank(session, "bob", alices.id, "export") == []  # bob's export is on his own bank
        assert jobs_on_bank(session, "alice", bobs.id, "export") == []
        assert latest_request(session, "alice", alices.id, "author") == {"judges": ["a:second"]}
        assert latest_request(session, "alice", bobs.id, "author") == {}
        assert [(b.name, n) for b, n in banks_with_version_counts(session, "bob")] == [("shared-name", 0)]
        assert owned_releases(session, alices.id, "alice") == []
        with pytest.raises(NotFoundError):
            owned_releases(session, alices.id, "bob")
