"""Existing benchmarks in the bank: import their items as static groups, audit a release as a
fixed item set (see docs/auditing-a-benchmark.md)."""

from itemsmith.templates_bank.static_items.formats import FIELDS, ImportFormat, parse_mapping
from itemsmith.templates_bank.static_items.importer import (
    GroupRows,
    ImportProgress,
    ImportReport,
    ItemImportError,
    RowProblem,
    import_items,
    read_groups,
)
from itemsmith.templates_bank.static_items.release_audit import audit_release, audit_table

__all__ = ["FIELDS", "GroupRows", "ImportFormat", "ImportProgress", "ImportReport", "ItemImportError", "RowProblem",
           "audit_release", "audit_table", "import_items", "parse_mapping", "read_groups"]
