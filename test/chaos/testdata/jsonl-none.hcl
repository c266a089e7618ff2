# The chaos suite's JSONL backend with plain lines; --data gives the data
# directory.
persistence "jsonl" {
  compression = "none"
}
