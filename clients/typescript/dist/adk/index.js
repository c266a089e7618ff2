// Package @logbook/client/adk: a Google ADK session service backed by logbook.
export { EVENT_TYPE, FRAMEWORK, LogbookSessionService, STATE_TYPE, keyOf } from "./service.js";
