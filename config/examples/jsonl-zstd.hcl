# The intended default profile once plugins/jsonl exists: JSONL + zstd under
# ./logbook-data, with the bundled summarizer and pruner.
data_dir = "./logbook-data"

persistence "jsonl" {
  compression = "zstd" # root defaults to data_dir
}

compaction {
  summarizer      = "compactor-summary"
  pruner          = "pruner"
  threshold_ratio = 0.8
  retain_ratio    = 0.16
}
