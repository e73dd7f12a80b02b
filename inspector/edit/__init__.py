"""Writing new sessions: re-chaining, boundary records, atomic writes, load-back verification."""

from inspector.edit.saving import SaveError, SaveResult, Verification, save, write_atomic

__all__ = ["SaveError", "SaveResult", "Verification", "save", "write_atomic"]
