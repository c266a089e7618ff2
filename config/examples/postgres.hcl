# Sessions in PostgreSQL, shared by several hosts: each session has one
# writer at a time across all of them (an advisory lock plus an owner
# epoch, see docs/storage.md), and every host lists and reads them all.
# A local JSONL mirror keeps a copy on this host's disk.
data_dir = "/var/lib/logbook"

persistence "postgres" { # the primary
  dsn       = env("LOGBOOK_PG_DSN") # e.g. "host=db.internal dbname=logbook user=logbook"; keep the password in ~/.pgpass or PGPASSWORD
  schema    = "logbook"             # created when missing
  max_conns = 8                     # pooled connections; the write claims use one more
  host_name = env("HOSTNAME")       # recorded as the owner of the sessions this host writes

  compress_data      = true
  compress_min_bytes = 256
}

persistence "jsonl" { # a mirror
  root = "sessions"
}
