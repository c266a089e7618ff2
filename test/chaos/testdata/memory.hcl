# The chaos suite's memory backend: the sessions live in serve's plugin
# process only, so no fault kills it and the verifier reads over the API.
# Small batches (the RPC bound is the least max_event_bytes allows), so
# that an import or a large append spans several.
max_event_bytes = 262144
rpc_max_bytes   = 1310720

persistence "memory" {}

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
