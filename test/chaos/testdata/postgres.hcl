# The chaos suite's PostgreSQL backend: the test database (default
# host=/var/run/postgresql dbname=test, else LOGBOOK_TEST_PG_DSN), in a
# schema of the run's own that the test drops at its end; the test writes
# both into its own copy of this file in place of the env() calls.
# Small batches (the RPC bound is the least max_event_bytes allows), so
# that an import or a large append spans several.
max_event_bytes = 262144
rpc_max_bytes   = 1310720

persistence "postgres" {
  dsn    = env("LOGBOOK_CHAOS_PG_DSN")
  schema = env("LOGBOOK_CHAOS_PG_SCHEMA")
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
