# The chaos suite's JSONL backend with zstd frames (one checksummed frame
# per acknowledged batch); --data gives the data directory.
persistence "jsonl" {
  compression = "zstd"
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
