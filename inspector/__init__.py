"""inspector: look inside Claude Code sessions."""

__version__ = "0.1.0"
