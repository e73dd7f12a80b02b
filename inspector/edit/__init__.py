"""Writing new sessions: `files` (atomic writes, cleanup), `records` (re-chaining, the compaction's records, the
load-back check), `saving` (a result saved as a session `claude --resume` continues)."""

from inspector.edit.files import SaveError, write_atomic
from inspector.edit.records import Verification
from inspector.edit.saving import SaveResult, save

__all__ = ["SaveError", "SaveResult", "Verification", "save", "write_atomic"]
