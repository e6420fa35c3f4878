"""The DatasetHandler contract that item templates code against.

Its docstrings go into the generator LLM's prompt, so they say exactly what
each method returns.
"""

from __future__ import annotations

from abc import ABC
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pandas as pd

_RECORDS_NAMES = ("records", "getDataframe", "get_dataframe")
_SERIES_NAMES = ("series", "query")


class HandlerContractError(TypeError):
    """A handler class does not implement the DatasetHandler contract."""


class DatasetHandler(ABC):
    """A dataset of time-series records.

    - `name`: short identifier of the dataset.
    - `description`: what the data is: units, sampling rate, what the labels mean, source.
    - `records()`: a DataFrame with one row per record: a `record_id` column plus metadata
      and label columns.
    - `series(record_id)`: a DataFrame with that record's samples: the index is time
      (timestamps or sample numbers), one column per channel.

    `getDataframe()` / `get_dataframe()` are aliases of `records()`, and `query(record_id)`
    of `series(record_id)`, so handlers and templates written for TimeSeriesExamAgent work
    unchanged. A subclass implements one name of each pair.

    Two optional declarations tell the item audit how to check what items show:
    - `units`: the unit of each series() column, e.g. `{"temp_max": "degC", "precipitation":
      "mm/day"}`. A channel shown from a column must carry that unit (in any spelling), and an
      item's text may not name another unit of the same quantity.
    - `generated_series`: for a handler whose templates make their own series (synthetic data),
      how they are made. Without it every channel an item shows must be a stretch of a column of
      the records its `metadata["record_ids"]` names, or declare how it was derived.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    units: ClassVar[dict[str, str]] = {}
    generated_series: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [names for names in (_RECORDS_NAMES, _SERIES_NAMES) if _implemented(cls, names) is None]
        if missing:
            wanted = " and ".join("/".join(f"{n}()" for n in names) for names in missing)
            raise HandlerContractError(f"handler class {cls.__name__} must implement {wanted}")

    def records(self) -> pd.DataFrame:
        """One row per record: `record_id` plus metadata and label columns."""
        return getattr(self, _implemented(type(self), _RECORDS_NAMES) or "")()

    def series(self, record_id: Any) -> pd.DataFrame:
        """The samples of one record: time index, one column per channel."""
        return getattr(self, _implemented(type(self), _SERIES_NAMES) or "")(record_id)

    def getDataframe(self) -> pd.DataFrame:  # TimeSeriesExamAgent's name
        """Alias of `records()`."""
        return self.records()

    def get_dataframe(self) -> pd.DataFrame:
        """Alias of `records()`."""
        return self.records()

    def query(self, record_id: Any) -> pd.DataFrame:
        """Alias of `series(record_id)`."""
        return self.series(record_id)


def _implemented(cls: type, names: tuple[str, ...]) -> str | None:
    """The first of `names` that `cls` overrides below DatasetHandler, if any."""
    for name in names:
        for klass in cls.__mro__:
            if klass is DatasetHandler or klass is object:
                break
            if name in klass.__dict__:
                return name
    return None
