import type { AgentInputItem, SessionHistoryRewriteArgs, SessionHistoryRewriteAwareSession, SessionHistoryTransactionArgs, SessionHistoryTransactionAwareSession } from "@openai/agents-core";
import { Client, type Session as LogbookHandle } from "../index.js";
import { type MirrorModel } from "./mirror.js";
export type { MirrorModel } from "./mirror.js";
/** The type of the adapter's records: the log-only plugin record
 * (docs/format.md, "Ignorable, unknown and plugin types") that holds the
 * SDK's items and every change of its history. */
export declare const RECORD_TYPE = "plugin:openai-agents/history";
/** The value of the "framework" label of the sessions this adapter creates. */
export declare const FRAMEWORK = "openai-agents";
/** Options of a LogbookSession. */
export interface LogbookSessionOptions {
    /** The client of the logbook server. */
    client: Client;
    /** The SDK's session id (getSessionId returns it); default a random
     * UUID. The logbook session id is sessionIdFor(key) (src/adapters/keys.ts),
     * and the key is kept in the header's labels. */
    key?: string;
    /** Make every write durable before it returns (default true): without
     * it a SIGKILL of the server can lose writes it acknowledged. */
    flush?: boolean;
    /** The model an assistant/message names as its source (the SDK's items
     * do not say); default provider "openai", name "unknown". */
    model?: MirrorModel;
    /** Attempts of a read or write the server did not answer (it
     * restarted, the connection broke); default 5. A retried write is never
     * stored twice: before writing again the adapter looks for it in the log. */
    maxAttempts?: number;
    /** The wait after the first unanswered attempt, doubled after each up
     * to 1 s; default 50 ms. */
    backoffMs?: number;
    /** Called when the typed events of a write could not be appended (the
     * write's items are stored; only their typed mirror is missing). */
    onMirrorError?: (err: unknown) => void;
}
/**
 * LogbookSession is a Session of the OpenAI Agents SDK whose history is a
 * logbook session. Every change of the history (addItems, a transaction,
 * a compaction, popItem, clearSession, a mutation) appends one record of
 * type RECORD_TYPE holding the items as given, so getItems returns them
 * deep-equal (as JSON: object members whose value is undefined are left
 * out). Items that are messages, function calls and function call results
 * also become typed events (turn/start, user/message, step/start,
 * assistant/message with tool-call blocks, tool/call, tool/result,
 * step/end, turn/end), in strict sessions, so the transcript, search and
 * the provider formats of logbook read an SDK session like any other.
 *
 * Unlike the SDK's MemorySession, nothing is ever removed from the log:
 * popItem, clearSession and a compaction are records that getItems
 * honours, while logbook's own views still show every message (a
 * compaction also replaces the surface with a checkpoint, as logbook's
 * compactions do), and an operation id stays used after clearSession.
 */
export declare class LogbookSession implements SessionHistoryTransactionAwareSession, SessionHistoryRewriteAwareSession {
    #private;
    /** The SDK's session id. */
    readonly key: string;
    /** The handle of the logbook session. */
    readonly session: LogbookHandle;
    constructor(o: LogbookSessionOptions);
    /** getSessionId returns the SDK's session id (the key). */
    getSessionId(): Promise<string>;
    /** getItems returns the history (its newest limit items when limit is
     * given), reading what other writers appended first. */
    getItems(limit?: number): Promise<AgentInputItem[]>;
    /** addItems appends items: one record, and their typed events. */
    addItems(items: AgentInputItem[]): Promise<void>;
    /** popItem removes the newest item from the history and returns it; the
     * log keeps it and records the pop. */
    popItem(): Promise<AgentInputItem | undefined>;
    /** clearSession empties the history; the log keeps every item and
     * records the clearing. Operation ids stay used. */
    clearSession(): Promise<void>;
    /** replaceHistoryWithCompaction makes items (a compaction item and the
     * suffix it keeps) the whole history. The log keeps the items it
     * replaces; logbook's surface gets a compaction checkpoint in their
     * place (docs/compaction.md), and the kept items their typed events. */
    replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void>;
    /** applyHistoryMutations applies the SDK's history mutations (a
     * replacement of a function call) as a record; the typed events keep
     * the call as it was first written. */
    applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void>;
    /**
     * applyHistoryTransaction applies a transaction once: its record is
     * appended with the transaction's operationId as logbook's operation id
     * (Session.appendOnce), so a retry from any process, after any restart,
     * appends nothing. The same id with the same transaction (compared by
     * value) returns without a change; another transaction under a used id
     * throws OPERATION_CONFLICT; a replace_suffix whose expectedSuffix is not
     * the history's suffix throws SUFFIX_MISMATCH. Both change nothing.
     */
    applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void>;
}
