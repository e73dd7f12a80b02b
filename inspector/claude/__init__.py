"""What Claude Code itself does, release by release: the version table and the model catalog."""
