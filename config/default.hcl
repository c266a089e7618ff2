# logbook's embedded default configuration: used when no config file is
# given. A relative data_dir here is relative to the working directory.
# The logbook command always replaces it: --data, else $LOGBOOK_DATA, else
# $XDG_DATA_HOME/logbook or ~/.local/share/logbook (docs/operations.md).
data_dir = "./logbook-data"

# Sessions as zstd-compressed JSONL files under data_dir.
persistence "jsonl" {
  compression = "zstd"
}

# Compaction with the bundled summarizer and pruner, at their defaults
# (docs/compaction.md).
compaction {
  summarizer      = "compactor-summary"
  pruner          = "pruner"
  threshold_ratio = 0.8
  retain_ratio    = 0.16
}
