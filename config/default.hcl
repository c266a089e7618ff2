# logbook's embedded default configuration: used when no config file is
# given. A relative data_dir here is relative to the working directory.
data_dir = "./logbook-data"

# Until plugins/jsonl lands the default keeps sessions in memory. When it
# does, this block becomes
#   persistence "jsonl" { compression = "zstd" }
# (see examples/jsonl-zstd.hcl).
persistence "memory" {}

# Compaction with the bundled summarizer and pruner, at the SPEC §16.11 and
# §17.2 defaults.
compaction {
  summarizer      = "compactor-summary"
  pruner          = "pruner"
  threshold_ratio = 0.8
  retain_ratio    = 0.16
}
