# The chaos suite's JSONL backend with zstd frames (one checksummed frame
# per acknowledged batch); --data gives the data directory.
persistence "jsonl" {
  compression = "zstd"
}
