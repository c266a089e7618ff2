import { BaseSessionService, type AppendEventRequest, type CreateSessionRequest, type DeleteSessionRequest, type Event as AdkEvent, type GetSessionRequest, type ListSessionsRequest, type ListSessionsResponse, type Session as AdkSession } from "@google/adk";
import type { Client } from "../client.js";
/** The type of the log-only record that keeps one ADK event, losslessly. */
export declare const EVENT_TYPE = "adk/event";
/** The type of the log-only record that keeps a state delta. */
export declare const STATE_TYPE = "adk/state";
/** The value of the "framework" label of every session this adapter makes. */
export declare const FRAMEWORK = "adk";
/** Options of a LogbookSessionService. */
export interface LogbookSessionServiceOptions {
    /** The client of the logbook server that holds the sessions. */
    client: Client;
    /** Make every appended event durable on every backend before appendEvent returns (default false). */
    flush?: boolean;
    /** Attempts of one write that fails with a retryable error (see retryable) or a lost race; default 8. */
    maxAttempts?: number;
}
/** The kinds of logbook session the adapter keeps: an ADK session, an app's state, a user's state. */
type Kind = "session" | "app" | "user";
/**
 * keyOf returns the framework key of a logbook session the adapter keeps:
 * "<app>/<user>/<session>" for an ADK session, "<app>/%app" for the app's
 * state and "<app>/<user>/%user" for a user's state, each part with "%" and
 * "/" escaped as %25 and %2F (so no two keys meet). sessionIdFor maps it to
 * the session id.
 */
export declare function keyOf(kind: Kind, app: string, user?: string, session?: string): string;
/**
 * LogbookSessionService is an ADK session service (BaseSessionService of
 * @google/adk) that keeps every ADK session in a logbook session of the
 * server the client talks to, so sessions survive a restart of the agent
 * and of the server, and retried appends are not stored twice.
 *
 * - An ADK session (app, user, session id) is the logbook session
 *   sessionIdFor("<app>/<user>/<session>") (see keyOf), with labels
 *   framework "adk", adk.kind "session", adk.app, adk.user, adk.session and
 *   key (the original names). A session of that id without those labels is
 *   not an ADK session of this app and user: getSession answers undefined.
 * - Each ADK event is stored whole, as the log-only record adk/event, and
 *   read back deep-equal (undefined members, null prototypes and the ADK
 *   event signature included). Its user message, model reply, function
 *   calls and function responses are also written as logbook's typed
 *   events (see plan), so transcript, messages and the viewer show the
 *   conversation. The session is strict (docs/format.md, "The agent-loop
 *   protocol").
 * - appendEvent appends under the event id as operation id: a retried
 *   append of the same event is a replay and stores nothing; the same id
 *   with other content is ADK's upsert (the later replaces the earlier in
 *   place, as in ADK's own services).
 * - State: session-scoped keys are folded from the session's log (its
 *   initial state, then each event's delta); app: keys from the log
 *   "<app>/%app" and user: keys from "<app>/<user>/%user", which hold
 *   adk/state records, one per event (or created session) that changed
 *   them, in the order they were made; temp: keys are never stored.
 */
export declare class LogbookSessionService extends BaseSessionService {
    #private;
    /** The service stores its sessions on the server of o.client. */
    constructor(o: LogbookSessionServiceOptions);
    /** createSession makes a new ADK session (id default: a random UUID) with
     * the initial state: its app: and user: keys go to the app's and the
     * user's state, temp: keys nowhere. A session that exists already is an
     * error, and nothing changes. */
    createSession({ appName, userId, state, sessionId }: CreateSessionRequest): Promise<AdkSession>;
    /** getSession returns the session with its events (the numRecentEvents
     * latest, those from afterTimestamp on, as ADK's in-memory service
     * selects them) and its state (app, user and session scope merged), or
     * undefined when there is none. */
    getSession({ appName, userId, sessionId, config }: GetSessionRequest): Promise<AdkSession | undefined>;
    /** listSessions lists the sessions of an app (of one user, or of all),
     * without events or state, paged and ordered as ADK's in-memory service
     * does; lastUpdateTime is the logbook time of the session's last event. */
    listSessions({ appName, userId, limit, offset, page, order }: ListSessionsRequest): Promise<ListSessionsResponse>;
    /** deleteSession deletes the session's log (release, then delete; a
     * legal hold refuses it with SESSION_HELD). The app's and the user's
     * state stay. A session that does not exist is not an error. */
    deleteSession({ appName, userId, sessionId }: DeleteSessionRequest): Promise<void>;
    /** appendEvent stores an event (a partial event is not stored) under
     * its id as operation id, then folds it into session as ADK does (its
     * state delta, its place in session.events). An event logbook cannot
     * hold (NaN, a cycle, …) is a TypeError naming the place; then, as when
     * the server refuses it, nothing is stored and session is unchanged. */
    appendEvent({ session, event }: AppendEventRequest): Promise<AdkEvent>;
}
export {};
