"""Summarizers behind one interface: offline (default, never sends anything) and anthropic."""

from inspector.compact.summarize.base import Cancel, Cancelled, Summarizer, SummarizerError, SummaryOutput, SummaryRequest
from inspector.compact.summarize.offline import OfflineSummarizer

__all__ = ["Cancel", "Cancelled", "OfflineSummarizer", "Summarizer", "SummarizerError", "SummaryOutput", "SummaryRequest"]
