"""A handler snapshot decodes to no more than its bytes and the loader's memory limit allow.

A user's handler file runs in the loader child, so it can replace the snapshot encoder and send
any bytes. Here it does (`forged_handler`): every record's arrays name the same region of the
buffer (a thousand records of one 2 MiB region decoded to 2 GB in the worker), or its strings
decode to many times their bytes. The first is refused by the layout rule before anything is
decoded; the second by the memory limit the worker decodes under, with an error naming it.
"""

from __future__ import annotations

import json
import struct
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from itemsmith.sandbox import SandboxError, SandboxLimits, SandboxPool
from itemsmith.sandbox.handler_data import SnapshotError, decode_snapshot, encode_snapshot

MIB = 1 << 20


def forged_handler(*, records: int, region_bytes: int = 2 * MIB, strings: int = 0) -> str:
    """A handler file whose loader sends a forged snapshot instead of its data: `records` records
    whose series (one float column and its index) all name one `region_bytes` region, or, with
    `strings`, one records frame indexed by that many two-letter strings (built as bytes: the
    loader holds 5 bytes a string, the worker would hold about 60)."""
    return textwrap.dedent(f'''
        import json, struct, sys
        import pandas as pd

        def spec(kind, count, offset=0, strings=None):
            return {{"kind": kind, "offset": offset, "count": count, "tz": None, "strings": strings}}

        def frame(columns, index):
            return {{"columns": columns, "index": index, "index_name": None}}

        def forged(handler, *, max_bytes, max_records):
            if {strings}:
                marker = b'"MARK"'
                manifest = {{"name": "forged", "description": "", "series": [],
                             "records": frame([], spec("str", {strings}, strings=["MARK"]))}}
                header = json.dumps(manifest).encode().replace(
                    b'["MARK"]', b"[" + b'"ab",' * ({strings} - 1) + b'"ab"]')
                blob = b""
            else:
                count = {region_bytes} // 8
                shared = frame([{{"name": "x", "values": spec("float", count)}}], spec("int", count))
                manifest = {{"name": "forged", "description": "", "records": frame([], spec("int", 0)),
                             "series": [{{"record_id": i, "frame": shared}} for i in range({records})]}}
                header = json.dumps(manifest).encode()
                blob = bytes({region_bytes})
            return b"ISNAP1\\n" + struct.pack("<Q", len(header)) + header + blob

        sys.modules["__main__"].encode_snapshot = forged  # the zygote's loader child calls it by this name

        class Forged:
            name = "forged"
            def records(self):
                return pd.DataFrame({{"record_id": [0]}})
            def series(self, record_id):
                return pd.DataFrame({{"x": [0.0]}})
        ''')


class _Honest:
    name = "honest"
    description = "two records"

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": ["a", "b"], "label": ["x", None]})

    def series(self, record_id: Any) -> pd.DataFrame:
        return pd.DataFrame({"v": np.arange(4.0), "t": pd.date_range("2024-01-01", periods=4, tz="UTC")},
                            index=pd.RangeIndex(4))


def _parts(data: bytes) -> tuple[dict[str, Any], bytes]:
    (size,) = struct.unpack_from("<Q", data, 7)
    return json.loads(data[15:15 + size]), data[15 + size:]


def _join(manifest: dict[str, Any], blob: bytes) -> bytes:
    header = json.dumps(manifest).encode()
    return b"ISNAP1\n" + struct.pack("<Q", len(header)) + header + blob


def test_an_honest_snapshot_lays_its_arrays_end_to_end_and_decodes() -> None:
    data = encode_snapshot(_Honest(), max_bytes=MIB, max_records=10)
    handler = decode_snapshot(data)
    assert handler.records()["label"].tolist()[0] == "x" and pd.isna(handler.records()["label"][1])
    assert handler.series("b")["v"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("change", ["shared", "overlapping", "gap", "trailing", "strings_of_numbers"])
def test_a_forged_layout_is_refused_before_anything_is_decoded(change: str) -> None:
    manifest, blob = _parts(encode_snapshot(_Honest(), max_bytes=MIB, max_records=10))
    second = manifest["series"][1]["frame"]
    if change == "shared":  # the second record's arrays name the first record's bytes
        second["columns"][0]["values"]["offset"] = manifest["series"][0]["frame"]["columns"][0]["values"]["offset"]
    elif change == "overlapping":
        second["columns"][0]["values"]["offset"] -= 8
    elif change == "gap":
        second["columns"][0]["values"]["offset"] += 8
        blob += bytes(8)
    elif change == "trailing":
        blob += bytes(8)
    else:
        manifest["records"]["columns"][1]["values"]["strings"] = [1, 2]
    with pytest.raises(SnapshotError, match="share or skip bytes|no array uses|other than strings"):
        decode_snapshot(_join(manifest, blob))


def _pool_error(tmp_path: Path, source: str, limits: SandboxLimits) -> tuple[str, float]:
    folder = tmp_path / "handler"
    folder.mkdir()
    (folder / "forged.py").write_text(source)
    started = time.monotonic()
    with pytest.raises(SandboxError) as info:
        SandboxPool(str(folder / "forged.py"), limits=limits)
    return str(info.value), time.monotonic() - started


def test_a_handler_whose_records_share_one_region_is_refused(tmp_path: Path) -> None:
    error, _ = _pool_error(tmp_path, forged_handler(records=1000), SandboxLimits())
    assert "the handler snapshot is invalid" in error and "may not share or skip bytes" in error, error


def test_a_handler_whose_data_decodes_past_the_memory_limit_is_refused_naming_it(tmp_path: Path) -> None:
    # 8 million two-letter strings: 40 MB in the snapshot, about 470 MB decoded
    limits = SandboxLimits(handler_memory_mb=256)
    error, _ = _pool_error(tmp_path, forged_handler(records=0, strings=8_000_000), limits)
    assert "needs more than the 256 MiB a handler may use (ITEMSMITH_SANDBOX_HANDLER_MEMORY_MB)" in error, error
