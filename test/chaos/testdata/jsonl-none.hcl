# The chaos suite's JSONL backend with plain lines; --data gives the data
# directory.
# Small batches (the RPC bound is the least max_event_bytes allows), so
# that an import or a large append spans several.
max_event_bytes = 262144
rpc_max_bytes   = 1310720

persistence "jsonl" {
  compression = "none"
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
