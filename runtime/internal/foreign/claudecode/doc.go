// Package claudecode is the Claude Code dialect of package foreign: it reads
// the session files Claude Code keeps under ~/.claude/projects/<project>/
// (<sessionId>.jsonl, subagents in <sessionId>/subagents/agent-<agentId>.jsonl
// or, in older versions, agent-<id>.jsonl) and maps their lines to logbook
// events. docs/import.md ("Claude Code") gives the mapping field by field.
//
// # The format
//
// A file is JSON Lines. Each line is an object with a type: "user" and
// "assistant" lines carry an Anthropic Messages API message (message) and
// chain into a tree by uuid and parentUuid; "system" lines note events
// (subtype "compact_boundary" starts a compacted history, followed by the
// "user" line with isCompactSummary that holds the summary); "summary",
// "file-history-snapshot", "queue-operation", "progress" and newer types
// are bookkeeping. Claude Code writes one line per content block of an
// assistant message, so several lines share a message.id (and requestId).
// Lines with isSidechain: true belong to a subagent.
//
// # The mapping
//
// A user prompt opens a turn (turn/start, user/message of source kind
// "prompt"); an assistant message merged from its lines is one step
// (step/start, assistant/message, a tool/call per tool_use block), preceded
// by request/header and request/context when its model changes; tool_result
// blocks are tool/results; the turn ends at the next prompt, or at End
// unless it is still running (its prompt, tool calls or results await the
// model). A
// compaction is a bracket whose checkpoint replaces the whole path; a
// prompt that continues an earlier line (a rewind) forks the session into
// branch-<n> and replaces the path after its parent. Every other line adds
// nothing typed: the importer keeps it as a raw record.
//
// The mapper is pure: it depends only on the lines, seqs and Accepted
// answers it is fed, so an incremental import that replays the stored
// lines gets the same state back.
package claudecode
