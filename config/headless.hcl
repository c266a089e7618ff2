# logbook's embedded headless profile: persistence and no compaction block,
# so nothing in the loop depends on a summarizer or pruner plugin.
data_dir = "./logbook-data"

# Until plugins/jsonl lands sessions are kept in memory. When it does, this
# block becomes
#   persistence "jsonl" { compression = "zstd" }
persistence "memory" {}
