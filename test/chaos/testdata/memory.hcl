# The chaos suite's memory backend: the sessions live in serve's plugin
# process only, so no fault kills it and the verifier reads over the API.
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
