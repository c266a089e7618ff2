# logbook's embedded headless profile: persistence and no compaction block,
# so nothing in the loop depends on a summarizer or pruner plugin.
data_dir = "./logbook-data"

persistence "jsonl" {
  compression = "zstd"
}
