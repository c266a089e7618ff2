import { LogbookError } from "./errors.js";
import { Event, type Input, type Message, type Seq } from "./events.js";
import { type JSONValue } from "./json.js";
/** Options of a Client. */
export interface ClientOptions {
    /** The server's base URL, e.g. "http://127.0.0.1:7420". */
    baseUrl: string;
    /** The bearer token, when the server requires one: a token of
     * `logbook token create`, a JWT, or the token of --token-file. */
    token?: string;
    /** The tenant every call addresses, for an operator's credential (any
     * other credential is refused with PERMISSION_DENIED unless it names its
     * own tenant): sent as ?tenant= on /v1 and as the Logbook-Tenant header
     * on any other path (Connect). Default: the credential's own tenant (an
     * operator's is "default"). A name outside [a-z0-9][a-z0-9-]{0,62} is
     * TENANT_INVALID. */
    tenant?: string;
    /** The fetch to use; default globalThis.fetch. */
    fetch?: typeof fetch;
}
/** The stored session header. */
export interface SessionHeader {
    type: "session";
    version: number;
    id: string;
    createdAt: number;
    cwd?: string;
    isSeeded: boolean;
    delegationDepth: number;
    /** Present only for a lenient session (a strict one has no member). */
    protocol?: "lenient";
    /** Present only when the session was created with labels. */
    labels?: Record<string, string>;
    [member: string]: unknown;
}
/** What GET /v1/sessions/{id} says of a session. */
export interface SessionInfo {
    id: string;
    header: SessionHeader;
    /** The number of events in the log. */
    length: number;
    /** Whether the server holds the session live. */
    live: boolean;
    /** The torn tail the next write open cuts, when there is one. */
    torn?: {
        bytes: number;
        fromSeq: Seq;
    };
    warning?: string;
}
/** The credential a server sees (GET /v1/whoami). */
export interface Whoami {
    /** The token's name or the JWT's subject; "" without credentials configured. */
    name: string;
    /** The tenant the call runs on: the credential's own, or for an
     * operator the one the client names (ClientOptions.tenant), else "default". */
    tenant: string;
    role: "read" | "write" | "admin" | "operator";
}
/** One page of GET /v1/sessions. */
export interface SessionPage {
    sessions: {
        id: string;
        live: boolean;
        header?: SessionHeader;
        revision?: string;
        error?: {
            code: string;
            detail: string;
        };
    }[];
    /** The cursor of the next page; null after the last. */
    nextCursor: string | null;
}
/** The answer of a flush: every backend's durable seq. */
export interface FlushResult {
    participated: boolean;
    backends: {
        name: string;
        durableSeq: Seq;
    }[];
}
/** What GET /v1/sessions/{id}/inspect says; it never writes. */
export interface Inspection {
    id: string;
    header: SessionHeader;
    events: number;
    live: boolean;
    openTurn: number | null;
    /** The closers a resume would append. */
    pendingRepair: unknown[];
    tornBytes: number;
    tornFromSeq?: Seq;
}
/** The body of POST /v1/sessions: the id and the header fields a new session may set. */
export interface CreateOptions {
    /** Default: a generated UUIDv7. */
    id?: string;
    /** Absolute, or absent. */
    cwd?: string;
    /** "subagent" for a session a delegating agent started. */
    origin?: "" | "subagent";
    /** How many delegations deep the session is; default 0. */
    delegationDepth?: number;
    agentPreset?: string;
    /** The id of the session that started this one. */
    parentSession?: string;
    /**
     * How appends are checked: "strict" (the default: the agent-loop rules of
     * docs/format.md) or "lenient" (they are skipped, never the payload rules).
     * Any other value is refused with 400 USAGE and nothing is created.
     */
    protocol?: "strict" | "lenient";
    /**
     * Labels kept in the header (docs/storage.md): at most 32; keys 1–64 bytes
     * of a–z, 0–9, ".", "_", "/", "-", starting with a letter or digit; values
     * up to 1024 bytes without control characters. Forks inherit them. The
     * adapters keep the framework and its original session key here.
     */
    labels?: Record<string, string>;
}
/** A backend's audit record of a lifecycle change. */
export interface AuditRecord {
    time: string;
    op: "delete" | "hold" | "release-hold";
    session: string;
    events: number;
    lastSeq?: Seq;
    digest: string;
    reason: string;
    by: string;
}
/** The answer of hold and releaseHold: whether anything changed, and the audit record when it did. */
export interface HoldResult {
    changed: boolean;
    record?: AuditRecord;
}
/** One event of a provenance tree (GET …/why). */
export interface WhyNode {
    seq: Seq;
    type: string;
    relation?: "source" | "shadowed" | "summarized" | "call" | "answers";
    replace?: {
        startSeq: Seq;
        endSeq: Seq;
    };
    summary?: string;
    repeated?: boolean;
    derivedFrom?: WhyNode[];
    [member: string]: unknown;
}
/** The nodes replacements took off the surface, and the event that replaced each (GET …/shadowed). */
export interface Shadowed {
    shadowed: Seq[];
    /** Shadowed seq (as a string key) → the replacing event's seq. */
    replacedBy: Record<string, Seq>;
}
/** The token estimate of the next request (GET …/tokens). */
export interface Tokens {
    total: number;
    surfaceTokens: number;
    headerTokens: number;
    baseline: "provider" | "estimated";
    perTurn: {
        turn?: number;
        startSeq: Seq;
        tokens: number;
    }[];
    nodes: {
        seq: Seq;
        tokens: number;
    }[];
    method: string;
}
/** One node of a lineage tree. */
export interface LineageTree {
    id: string;
    /** The seq it was forked at, when it inherited events (absent at the root). */
    seq?: Seq;
    children: LineageTree[];
}
/** A session's fork family from the stored headers (GET …/lineage). */
export interface Lineage {
    id: string;
    /** Nearest parent first; a parent that is not stored is missing and ends the walk. */
    ancestors: {
        id: string;
        seq?: Seq;
        missing?: boolean;
    }[];
    children: {
        id: string;
        seq?: Seq;
        createdAt: number;
    }[];
    tree: LineageTree;
}
/** Formats of messages (docs/providers.md). */
export type MessageFormat = "logbook" | "openai" | "anthropic" | "openai-responses" | "markdown";
/** Formats of a model request (docs/providers.md). */
export type RequestFormat = "logbook" | "openai" | "anthropic" | "openai-responses";
/** The request a model would be sent, in the logbook format (GET …/request). */
export interface ModelRequest {
    /** The folded request header; null when the log has none. */
    header: JSONValue;
    /** The request context; null when the log has none. */
    context: JSONValue;
    messages: Message[];
}
/** The answer of open: the live session and what its resume repaired. */
export interface Opened {
    id: string;
    header: SessionHeader;
    /** The log length after the open: the seq the next append gets. */
    nextSeq: Seq;
    /** The session was live already: nothing was read or repaired. */
    alreadyLive: boolean;
    /** The envelopes the resume appended before its marker: session/recovered, then the closers of an interrupted turn. */
    repaired: unknown[];
    /** The torn tail the write open cut, when there was one. */
    torn?: {
        bytes: number;
        fromSeq: Seq;
        artifact: string;
    };
}
/** One entry of the transcript. */
export interface TranscriptEntry {
    seq: Seq;
    type: string;
    message: Message;
    onSurface: boolean;
}
/** Options of an append. */
export interface AppendOptions {
    /** The log length the first event must find (its seq); any other is SEQ_CONFLICT and nothing is appended. */
    expectedSeq?: Seq;
    /** Make the events durable on every backend before the answer. */
    flush?: boolean;
    /** Append once under this id (docs/format.md, "Operation ids"): the inputs
     * are one atomic group stored with the id; the same id with the same
     * inputs appends nothing and answers the original events (appendOnce says
     * it was a replay), with other inputs it is OPERATION_CONFLICT. 1–128
     * bytes of printable ASCII, else OPERATION_ID_INVALID. */
    operationId?: string;
    signal?: AbortSignal;
}
/** What Session.appendOnce did. */
export interface AppendOutcome {
    /** The events of the operation: appended now, or by the original append when replayed. */
    events: Event[];
    /** The session already held the operation id with the same inputs: nothing was appended. */
    replayed: boolean;
}
/** Options of Session.appendRetry; every absent field takes the default it names. */
export interface RetryOptions {
    /** Flush in the same round trip as the append (a failed flush is retried too). */
    flush?: boolean;
    /** Bound on the attempts; default unbounded (give a signal with a timeout). */
    maxAttempts?: number;
    /** Wait after the first failed attempt, doubled up to maxBackoffMs; defaults 10 and 1000. */
    backoffMs?: number;
    maxBackoffMs?: number;
    /** Called with each failure the retry goes on from. */
    onRetry?: (err: LogbookError) => void;
    signal?: AbortSignal;
}
/** Options of Session.follow. */
export interface FollowOptions {
    /** The first seq to yield; default 0. */
    from?: Seq;
    /** The seq to stop before; default never. */
    to?: Seq;
    /** Ends the iteration (it returns, it does not throw). */
    signal?: AbortSignal;
    /** Wait before a reconnect, doubled up to maxBackoffMs; defaults 50 and 1000. */
    backoffMs?: number;
    maxBackoffMs?: number;
    /** Called with each failure of the stream a reconnect goes on from. */
    onReconnect?: (err: unknown) => void;
    /** A stream silent this long (the server heartbeats every 15 s) is
     * taken for a dead connection and reconnected; default 60000. */
    idleTimeoutMs?: number;
}
/** The derived views GET /v1/sessions/{id}/<view> answers. */
export type View = "messages" | "transcript" | "surface" | "header" | "request" | "inspect" | "why" | "shadowed" | "tokens" | "lineage";
/** The query of a view: at (as right after that event), format (messages, request), seq (why). */
export interface ViewQuery {
    at?: Seq;
    format?: string;
    seq?: Seq;
}
type Query = Record<string, string | number | boolean | undefined>;
interface Call {
    query?: Query;
    json?: unknown;
    ndjson?: string;
    headers?: Record<string, string>;
    signal?: AbortSignal | undefined;
}
/** Client talks to the /v1 API of one `logbook serve`. Its methods may be
 * called concurrently. */
export declare class Client {
    #private;
    readonly baseUrl: string;
    /** The tenant every call addresses (ClientOptions.tenant); undefined for the credential's own. */
    readonly tenant: string | undefined;
    constructor(o: ClientOptions);
    /** whoami returns the credential the server sees: its name, tenant and role. */
    whoami(): Promise<Whoami>;
    /** create makes a new session (id default: a generated one) with the header fields of o and returns it. */
    create(o?: CreateOptions): Promise<Session>;
    /** session returns the handle of session id, without a request. */
    session(id: string): Session;
    /** list returns one page of the sessions: by id, most recent first, or most recently active first. */
    list(o?: {
        limit?: number;
        cursor?: string;
        order?: "id" | "recent" | "activity";
    }): Promise<SessionPage>;
    /** openapi returns the OpenAPI document of the server's /v1 API. */
    openapi(): Promise<JSONValue>;
    /** call sends one request and returns the successful response; a problem answer or no answer throws LogbookError. */
    call(method: string, path: string, c?: Call): Promise<Response>;
}
/** encodeInput writes one append input as its NDJSON line. */
export declare function encodeInput(i: Input<unknown>): string;
/** Session is the handle of one session on the server. */
export declare class Session {
    #private;
    readonly client: Client;
    readonly id: string;
    /** The stored header, when the handle came from create or fork. */
    readonly header: SessionHeader | undefined;
    constructor(client: Client, id: string, header?: SessionHeader);
    /** info returns the header, the log's length, and whether it is live. */
    info(): Promise<SessionInfo>;
    /** append appends inputs in order and returns their stored events. The
     * first rejected input ends the request: the ones before it stay
     * appended, and the LogbookError says how many (appended, from firstSeq). */
    append(inputs: Input<unknown>[], o?: AppendOptions): Promise<Event[]>;
    /** appendGroup appends inputs as one atomic group (docs/compaction.md):
     * every one with consecutive seqs, or none; a rejected input throws its
     * LogbookError (line, index), appended 0. With expectedSeq the first
     * input must get that seq. A group holds at most one surface or
     * projection event. */
    appendGroup(inputs: Input<unknown>[], o?: AppendOptions): Promise<Event[]>;
    /** appendOnce appends inputs as one atomic group under operationId, so
     * that a retry of it, from any process and after any restart, never
     * appends twice: when the session already holds the id with the same
     * inputs, nothing is appended and the original events come back with
     * replayed true. Other inputs under a held id throw OPERATION_CONFLICT
     * (firstSeq names the original's first event). */
    appendOnce(operationId: string, inputs: Input<unknown>[], o?: Omit<AppendOptions, "operationId">): Promise<AppendOutcome>;
    /** appendRetry appends inputs at log length expected, retrying what may
     * pass (see retryable) with backoff. Every attempt carries the expected
     * length, so nothing is appended twice: when an attempt whose answer was
     * lost did append, the next one meets SEQ_CONFLICT, and appendRetry reads
     * the events at expected back and compares them with its inputs (type,
     * data by value, surfaceOp, sourceEventSeqs, ignorable). Its own events
     * count as appended (the rest, if any, are appended after them); another
     * writer's throw the SEQ_CONFLICT. A failure's appended counts the
     * inputs appended over all attempts, from expected. */
    appendRetry(expected: Seq, inputs: Input<unknown>[], o?: RetryOptions): Promise<Event[]>;
    /** events reads the log [from, to) (defaults: all of it). */
    events(o?: {
        from?: Seq;
        to?: Seq;
        signal?: AbortSignal | undefined;
    }): Promise<Event[]>;
    /** follow yields the log's events from o.from, then each event as it is
     * appended, over Server-Sent Events. A dropped stream (the server
     * restarted, the connection broke) is reconnected with backoff from the
     * event after the last one yielded, with Last-Event-ID: no gap, no
     * duplicate; so is a stream silent for o.idleTimeoutMs. It ends at o.to,
     * when o.signal aborts, or when the loop breaks; a problem that no retry
     * can cure (SESSION_NOT_FOUND) throws. */
    follow(o?: FollowOptions): AsyncGenerator<Event, void, undefined>;
    /** messages returns the derived messages, as right after event at
     * (default: now), in format (GET …/messages?format=; docs/providers.md):
     * logbook (the default) as derived, openai or anthropic the provider's
     * messages array, openai-responses the Responses API's input items,
     * markdown the text for a person. Every session renders, with or without
     * a request header; a provider format throws TOOL_CALLS_PENDING while a
     * step's calls have no result. */
    messages(o?: {
        at?: Seq;
        format?: "logbook";
    }): Promise<Message[]>;
    messages(o: {
        at?: Seq;
        format: "openai" | "anthropic" | "openai-responses";
    }): Promise<JSONValue[]>;
    messages(o: {
        at?: Seq;
        format: "markdown";
    }): Promise<string>;
    messages(o: {
        at?: Seq;
        format?: MessageFormat;
    }): Promise<Message[] | JSONValue[] | string>;
    /** transcript returns the events that appended a message, as recorded. */
    transcript(): Promise<TranscriptEntry[]>;
    /** surface returns the seqs of the surface nodes, in surface order. */
    surface(o?: {
        at?: Seq;
    }): Promise<Seq[]>;
    /** requestHeader returns the folded request header, null when the log has none. */
    requestHeader(o?: {
        at?: Seq;
    }): Promise<JSONValue>;
    /** request returns the request a model would be sent right after event
     * at (default: now), in format (GET …/request?format=): {header, context,
     * messages} (logbook, the default), or the provider's body (openai,
     * anthropic, openai-responses). A provider format throws
     * REQUEST_HEADER_MISSING when the log has no request/header up to that
     * event, and TOOL_CALLS_PENDING while a step's calls have no result. */
    request(o?: {
        at?: Seq;
        format?: "logbook";
    }): Promise<ModelRequest>;
    request(o: {
        at?: Seq;
        format: "openai" | "anthropic" | "openai-responses";
    }): Promise<JSONValue>;
    request(o: {
        at?: Seq;
        format?: RequestFormat;
    }): Promise<ModelRequest | JSONValue>;
    /** why returns the provenance tree of event seq. */
    why(seq: Seq): Promise<WhyNode>;
    /** shadowed returns the nodes replacements took off the surface, as after event at (default: now). */
    shadowed(o?: {
        at?: Seq;
    }): Promise<Shadowed>;
    /** tokens returns the token estimate of the next request, as after event at (default: now). */
    tokens(o?: {
        at?: Seq;
    }): Promise<Tokens>;
    /** lineage returns the session's fork family. */
    lineage(): Promise<Lineage>;
    /** inspect returns the open turn and the repair a resume would append. */
    inspect(): Promise<Inspection>;
    /** text returns a view's document exactly as the server sent it: the
     * canonical bytes, for comparing or for a lossless parser. */
    text(view: View, o?: ViewQuery): Promise<string>;
    /** open resumes the stored session for write (closing an interrupted
     * turn, cutting a torn tail) and keeps it live, or finds it live; an
     * append resumes a session by itself, so open is for reading the repair
     * before the first write. */
    open(): Promise<Opened>;
    /** fork makes a live child keeping the events up to at (default: all), with id as (default: generated). */
    fork(o?: {
        at?: Seq;
        as?: string;
    }): Promise<Session>;
    /** flush makes every appended event durable on every backend. */
    flush(signal?: AbortSignal): Promise<FlushResult>;
    /** compact runs a manual compaction and returns the events it appended. */
    compact(o?: {
        startSeq?: Seq;
        endSeq?: Seq;
        sourceCommandId?: string;
    }): Promise<Event[]>;
    /** release flushes the session and lets the server drop it. */
    release(): Promise<void>;
    /** delete deletes the stored session from every backend, audited with
     * by "api" and the reason: a live session is ALREADY_OWNED (release it
     * first), a held one SESSION_HELD. */
    delete(o?: {
        reason?: string;
    }): Promise<void>;
    /** hold puts a legal hold on the stored session: delete and retention refuse it until releaseHold. */
    hold(o?: {
        reason?: string;
    }): Promise<HoldResult>;
    /** releaseHold lifts the legal hold. */
    releaseHold(o?: {
        reason?: string;
    }): Promise<HoldResult>;
}
/** sameEvent reports whether a stored event is the one input would append. */
export declare function sameEvent(ev: Event, input: Input<unknown>): boolean;
export {};
