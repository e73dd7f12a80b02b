"""The library wing: what inspector keeps and works out about all of a user's sessions, over the reading layer.

- `cache`: the cache folder and its SQLite files (one database beside its search shards), and their errors;
- `fts`, `listings`, `shards`, `texts`: the full-text search index (the index, the folder listings it keeps, the
  worker side that reads texts into shards, and what a person reads in a record);
- `search`: finding text in transcripts (through the index or by a scan, the same answers);
- `stats`, `stats_batch`: one row of facts per session, cached in the database;
- `cost`: what the responses cost, by the model registry's dated prices;
- `retention`: when Claude Code's cleanup deletes a session, and the archive that keeps a copy.

It reads transcripts through `inspector.transcript` and knows models through `inspector.claude`; it never imports
tokens, compact, edit or the front ends.
"""
