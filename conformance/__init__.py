"""The conformance harness: the real Claude Code, run against a fake API, compared with what inspector says."""
