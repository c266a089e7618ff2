// Package @logbook/client/claude-agent-sdk: a SessionStore of the Claude
// Agent SDK (@anthropic-ai/claude-agent-sdk) backed by logbook.
export { FRAMEWORK, LogbookSessionStore, sessionIdOf } from "./store.js";
export { ENTRY_TYPE } from "./transcript.js";
