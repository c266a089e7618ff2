// Package @logbook/client: the client of logbook's /v1 JSON API.
export { Client, Session, encodeInput, sameEvent } from "./client.js";
export { CONNECTION_FAILED, LogbookError, PERMISSION_DENIED, TENANT_INVALID, UNAUTHENTICATED, retryable } from "./errors.js";
export { RawJSON, rawJSON, encodeJSON } from "./json.js";
export * as events from "./events.js";
export { Event } from "./events.js";
