# The chaos suite's SQLite backend: one database file in the data
# directory (--data), in WAL mode.
persistence "sqlite" {
  path         = "sessions.db"
  journal_mode = "wal"
}

# Manual compaction only (POST /compact, logbook compact), with the
# bundled summarizer in extractive mode: no model, no network.
compaction {
  summarizer = "compactor-summary"
  auto       = false
}

plugin "compactor-summary" {
  config {
    mode = "extractive"
  }
}
