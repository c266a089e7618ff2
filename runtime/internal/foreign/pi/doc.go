// Package pi maps the session files of pi (the pi coding agent, whose
// SessionManager writes them under ~/.pi/agent/sessions) to logbook events.
//
// # The source format
//
// A pi session file is JSON lines. The first is the header
// {"type":"session","version":V,"id":…,"timestamp":…,"cwd":…}; every other
// line is an entry with a "type". Three versions exist:
//
//   - v1 (no "version" member): a linear list; entries have no ids, and a
//     "compaction" names the first entry it keeps by its index among the
//     file's parsed entries, header included ("firstKeptEntryIndex").
//   - v2: every entry has an "id" and a "parentId" (null for a root), so
//     the file is a tree; the session's current path runs from the root to
//     the last entry written. A "compaction" names its first kept entry by
//     id ("firstKeptEntryId"). Extension messages have role "hookMessage".
//   - v3: v2 with that role renamed "custom".
//
// Entry types: "message" (a user, assistant, toolResult, system, custom or
// bashExecution message), "model_change", "thinking_level_change",
// "compaction", "branch_summary", "context_edit", "custom_message",
// "custom", "label", "session_info" and "usage".
//
// # The mapping
//
// docs/import.md ("pi") lists it field by field. In short: the main
// session follows file order; an entry whose parent is not the entry
// before it on the current path is a tree switch, which forks the session
// as it stood into "branch-<n>" and moves the main surface to the new path
// (its first user-side message replaces the surface nodes of the abandoned
// entries). Messages become turns, steps, messages and tool results;
// compactions and branch summaries become compaction checkpoints; model,
// thinking-level and tool changes become request headers; a context edit
// of a tool result becomes a tool-result rewrite. Everything else is kept
// only as the raw source record the importer writes for every line.
//
// The Mapper is a pure function of the lines, seqs and Accepted answers
// it is fed: it reads no clock, file or store.
package pi
