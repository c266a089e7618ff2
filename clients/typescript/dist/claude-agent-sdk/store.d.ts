import type { SessionKey, SessionStore, SessionStoreEntry, SessionSummaryEntry } from "@anthropic-ai/claude-agent-sdk";
import { type Client } from "../index.js";
/** The label "framework" of every session the store writes. */
export declare const FRAMEWORK = "claude-agent-sdk";
/** Options of a LogbookSessionStore. */
export interface LogbookSessionStoreOptions {
    /** The client of the logbook server. */
    client: Client;
    /** Make every append durable on every backend before it resolves (one
     * flush per request); default false: durable when the server flushes. */
    flush?: boolean;
    /** How many sessions' loop states (the turn, the step, the uuids stored)
     * to keep between appends; default 1000. A session not kept is read back
     * from the log on its next append. */
    maxCachedSessions?: number;
    /** Called when logbook refused the typed events of a line (a malformed
     * message, say): the line itself is stored, its typed events are not.
     * Default: process.emitWarning. */
    onWarning?: (message: string) => void;
}
/**
 * sessionIdOf returns the logbook session id of a SessionStore key: the
 * projectKey and the sessionId (each with "%" written "%25" and "/"
 * written "%2F"), then the subpath, joined by "/", mapped by sessionIdFor
 * (the string itself when it is a valid id, else its first 40 bytes, "-"
 * and 16 hex digits of its SHA-256). It throws a RangeError naming the rule
 * for a key the store cannot keep: an empty subpath (the SDK's own rule),
 * or a part longer than a label value holds (1024 bytes) or holding a
 * control character.
 */
export declare function sessionIdOf(key: SessionKey): string;
/**
 * LogbookSessionStore is a SessionStore of `@anthropic-ai/claude-agent-sdk`
 * that keeps each transcript (a main session, or a subagent's under its
 * subpath) as one logbook session, lenient, labelled with the framework
 * and the original key. Each line is stored verbatim as an ignorable
 * `claude-code/entry` event, so load gives back lines deep-equal to those
 * appended; its messages, tool calls and tool results are also written as
 * logbook's typed events. A line with a uuid is appended once under it as
 * the operation id, so a retried append or a second import never stores it
 * twice. Appends to one session run in call order.
 */
export declare class LogbookSessionStore implements SessionStore {
    #private;
    readonly client: Client;
    constructor(o: LogbookSessionStoreOptions);
    /** append stores entries in order, each line with a uuid under it as the
     * operation id (a line stored already is skipped), the others as they
     * come; it creates the session on first use. */
    append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void>;
    /** load returns the lines of key in the order stored, null when the key was never written. */
    load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
    /** listSessions returns the main transcripts of projectKey, each with the
     * server's time of its last write (lastActivity) as mtime. */
    listSessions(projectKey: string): Promise<Array<{
        sessionId: string;
        mtime: number;
    }>>;
    /** listSessionSummaries returns the summary of each main transcript of
     * projectKey, folded by the SDK's foldSessionSummary from its stored
     * lines, with the mtime listSessions gives; nothing derived is stored, so
     * a summary never lags its log. */
    listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]>;
    /** delete deletes the session of key from every backend, and for a main
     * transcript its subagents' sessions too; a session under a legal hold
     * is not deleted (SESSION_HELD). */
    delete(key: SessionKey): Promise<void>;
    /** listSubkeys returns the subpaths stored under a main transcript. */
    listSubkeys(key: {
        projectKey: string;
        sessionId: string;
    }): Promise<string[]>;
}
