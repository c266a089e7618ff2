// Package @logbook/client: the client of logbook's /v1 JSON API.

export { Client, Session, encodeInput, sameEvent } from "./client.js";
export type {
  AppendOptions,
  AppendOutcome,
  AuditRecord,
  ClientOptions,
  CreateOptions,
  FlushResult,
  FollowOptions,
  HoldResult,
  Inspection,
  Lineage,
  LineageTree,
  MessageFormat,
  ModelRequest,
  Opened,
  RequestFormat,
  RetryOptions,
  SessionHeader,
  SessionInfo,
  SessionPage,
  Shadowed,
  Tokens,
  TranscriptEntry,
  View,
  ViewQuery,
  Whoami,
  WhyNode,
} from "./client.js";
export { CONNECTION_FAILED, LogbookError, PERMISSION_DENIED, TENANT_INVALID, UNAUTHENTICATED, retryable } from "./errors.js";
export type { Problem } from "./errors.js";
export { RawJSON, rawJSON, encodeJSON } from "./json.js";
export type { JSONValue } from "./json.js";
export * as events from "./events.js";
export { Event } from "./events.js";
export type { Input, Message, Seq, SurfaceOp } from "./events.js";
