"""Shared base of the built-in dataset handlers: in-memory frames, built once, handed out as copies."""

from __future__ import annotations

import threading
from abc import abstractmethod
from typing import Any

import pandas as pd

from itemsmith.handlers.base import DatasetHandler


class FrameHandler(DatasetHandler):
    """A handler whose records frame and per-record series frames are built on first use and cached.

    A subclass implements `_build()`, returning the records frame (with a string `record_id` column)
    and a dict `record_id -> series frame`. `records()` and `series()` return copies, so a caller
    cannot change what the next call sees.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: pd.DataFrame | None = None
        self._series: dict[str, pd.DataFrame] = {}

    @abstractmethod
    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        """Load the data: (records frame, {record_id: series frame})."""

    def _data(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        with self._lock:
            if self._records is None:
                records, series = self._build()
                records = records.reset_index(drop=True)
                records.insert(0, "record_id", records.pop("record_id").astype(str))
                if records["record_id"].duplicated().any() or set(records["record_id"]) != set(series):
                    raise RuntimeError(f"{type(self).__name__}: records and series do not match")
                self._series = series
                self._records = records
        return self._records, self._series

    def records(self) -> pd.DataFrame:
        """One row per record: `record_id` plus metadata and label columns (a fresh copy)."""
        return self._data()[0].copy()

    def series(self, record_id: Any) -> pd.DataFrame:
        """The samples of one record: time index, one numeric column per channel (a fresh copy)."""
        records, series = self._data()
        key = str(record_id)
        if key not in series:
            examples = ", ".join(repr(r) for r in records["record_id"].iloc[:3])
            raise KeyError(f"{self.name}: unknown record_id {record_id!r} (record_ids look like {examples})")
        return series[key].copy()
