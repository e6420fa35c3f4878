"""Errors of the storage layer, each with a message a user can act on."""

from __future__ import annotations

__all__ = ["BankExistsError", "NotFoundError", "StorageError", "VersionConflictError"]


class StorageError(RuntimeError):
    """Base class of the storage errors."""


class NotFoundError(StorageError, LookupError):
    """A bank, template version or release does not exist."""


class BankExistsError(StorageError):
    """A bank with that name exists already."""


class VersionConflictError(StorageError):
    """The same source is already stored under another template key, or a parent is missing."""
