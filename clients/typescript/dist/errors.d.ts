/** The code of a request that never got an answer from the server (it
 * could not connect, or the connection broke); a client-side code, retried
 * like the server's unavailable codes. */
export declare const CONNECTION_FAILED = "CONNECTION_FAILED";
/** The code of a call without a credential, or with one the server does
 * not accept (unknown, revoked, expired): status 401. */
export declare const UNAUTHENTICATED = "UNAUTHENTICATED";
/** The code of a call the credential's role may not make, or naming a
 * tenant other than its own without being an operator's: status 403,
 * whether the session exists or not. */
export declare const PERMISSION_DENIED = "PERMISSION_DENIED";
/** The code of a tenant name outside [a-z0-9][a-z0-9-]{0,62}: status 400. */
export declare const TENANT_INVALID = "TENANT_INVALID";
/** The body of an error answer of the server (application/problem+json). */
export interface Problem {
    type?: string;
    title?: string;
    status: number;
    detail: string;
    code: string;
    op?: string;
    sessionId?: string;
    seq?: number;
    index?: number;
    line?: number;
    appended?: number;
    firstSeq?: number;
    expected?: number;
    actual?: number;
    fenced?: boolean;
    cause?: string;
    meta?: Record<string, string>;
}
/** LogbookError is every failure of a call: the server's problem (code,
 * status, detail and details) or CONNECTION_FAILED (status 0). Test the
 * code, never the message. */
export declare class LogbookError extends Error {
    /** The logbook code, e.g. "SEQ_CONFLICT" (docs/errors.md). */
    readonly code: string;
    /** The HTTP status; 0 when the server did not answer. */
    readonly status: number;
    readonly detail: string;
    /** Of a failed append: how many of its events were appended, from firstSeq. */
    readonly appended: number | undefined;
    readonly firstSeq: number | undefined;
    /** Of SEQ_CONFLICT: the log length expected and the one found. */
    readonly expected: number | undefined;
    readonly actual: number | undefined;
    /** The rejected NDJSON line (from 1) and input (from 0) of an append. */
    readonly line: number | undefined;
    readonly index: number | undefined;
    /** The offending seq, when the error names one. */
    readonly seq: number | undefined;
    /** A final persistence failure fenced the session. */
    readonly fenced: boolean;
    /** The whole problem document as the server sent it. */
    readonly problem: Problem;
    /** LogbookError wraps a problem; cause is the underlying failure, if any. */
    constructor(problem: Problem, cause?: unknown);
}
/** retryable reports whether a failed call may pass when repeated: the
 * server or a plugin unavailable, an I/O error, a busy backend, the
 * server's cap on live sessions reached (max_live_sessions), no answer at
 * all, or a failed flush of a session that is not fenced. */
export declare function retryable(err: unknown): boolean;
