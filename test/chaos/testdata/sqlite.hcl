# The chaos suite's SQLite backend: one database file in the data
# directory (--data), in WAL mode.
persistence "sqlite" {
  path         = "sessions.db"
  journal_mode = "wal"
}
