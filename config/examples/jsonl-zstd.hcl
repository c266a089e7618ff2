# The embedded default profile, spelled out: JSONL + zstd under
# ./logbook-data, with the bundled summarizer and pruner.
data_dir = "./logbook-data"

persistence "jsonl" {
  compression = "zstd" # root defaults to data_dir
  zstd_level  = "default"
}

compaction {
  summarizer      = "compactor-summary"
  pruner          = "pruner"
  threshold_ratio = 0.8
  retain_ratio    = 0.16
}
