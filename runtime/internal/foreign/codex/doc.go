// Package codex reads the session files ("rollouts") of OpenAI's Codex CLI
// and maps them to logbook events (docs/import.md, "Codex").
//
// # The format
//
// Codex writes one rollout per session under
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl, one JSON object
// per line, each ended by a line feed:
//
//	{"timestamp":"…","type":T,"payload":{…}}            (current)
//	{"timestamp":"…","ordinal":N,"type":T,"payload":{…}} (paginated history)
//
// T is session_meta (the session's id, cli_version, cwd, model_provider,
// base_instructions, forked_from_id, history_mode, history_base), turn_context
// (the model and policies of the next model request), response_item (one
// Responses API item: message, reasoning, function_call,
// function_call_output, custom_tool_call, custom_tool_call_output,
// local_shell_call, web_search_call, …), event_msg (what the UI was told),
// compacted (a compaction: its summary message and the replacement
// history) and a few newer kinds (world_state, inter_agent_communication).
// Older rollouts have no envelope: a bare meta line {"id","timestamp",
// "instructions","git"}, then bare response items and {"record_type":"state"}
// lines. Both are read.
//
// # What a line becomes
//
// A line that is not valid UTF-8, not JSON, torn (the last line, without
// its line feed, not complete JSON) or not a Codex line is damage. Every
// other line maps to zero or more typed events; a Step never holds more
// than one surface event, so the mapper may carry events of one line over
// to the next Step (docs/import.md says which).
package codex
