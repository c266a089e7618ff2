# One host keeping every session in three places: JSONL (the primary, read
# from), a SQLite mirror, and a third-party archive backend, plus compaction
# with the bundled summarizer and pruner and spilling of large tool output.
data_dir = "/var/lib/logbook"

write_window      = "100ms"
retry_max_backoff = "10s"

persistence "jsonl" { # the first block is the primary
  root        = "sessions" # /var/lib/logbook/sessions
  compression = "zstd"
  zstd_level  = "better"
}

persistence "sqlite" { # a mirror: gets every batch too
  path         = "sessions.db" # relative paths resolve against data_dir
  journal_mode = "wal"
  busy_timeout = 10000
}

persistence "archive" { # third-party: this body is passed to the plugin as JSON
  bucket = "logbook-archive"
  region = "eu-central-1"
  token  = env("ARCHIVE_TOKEN")
  retry {
    attempts = 3
    backoff  = "2s"
  }
}

plugin "archive" {
  command = "/opt/logbook/plugins/logbook-archive"
  args    = ["--log-level", "info"]
  # sha256sum of the binary; a mismatch refuses to start the plugin
  sha256  = "9f2c8a6e1d4b7c3a5e0f8d2b6a4c1e9f7b3d5a0c8e2f6b4d1a9c7e3f5b0d2a8c"
}

compaction {
  summarizer = "compactor-summary"
  pruner     = "pruner"

  threshold_ratio = 0.8
  retain_ratio    = 0.16
  max_tokens      = 8192

  summarization_provider = "deepseek"
  summarization_model    = "deepseek-chat"

  model_policy {
    provider        = "openai"
    model           = "gpt-4o-mini"
    threshold_ratio = 0.7
    retain_tokens   = 20000
  }

  prune_threshold_chars = 8192
  prune_head_chars      = 4096
  prune_tail_chars      = 1024

  spill_max_inline_bytes = 50000
  spill_exempt_tools     = ["read"]
}

plugin "compactor-summary" { # bundled: no command
  config {
    base_url = env("OPENAI_BASE_URL")
    api_key  = env("OPENAI_API_KEY")
    model    = "deepseek-chat"
  }
}
