/** The code of a request that never got an answer from the server (it
 * could not connect, or the connection broke); a client-side code, retried
 * like the server's unavailable codes. */
export const CONNECTION_FAILED = "CONNECTION_FAILED";
/** The code of a call without a credential, or with one the server does
 * not accept (unknown, revoked, expired): status 401. */
export const UNAUTHENTICATED = "UNAUTHENTICATED";
/** The code of a call the credential's role may not make, or naming a
 * tenant other than its own without being an operator's: status 403,
 * whether the session exists or not. */
export const PERMISSION_DENIED = "PERMISSION_DENIED";
/** The code of a tenant name outside [a-z0-9][a-z0-9-]{0,62}: status 400. */
export const TENANT_INVALID = "TENANT_INVALID";
/** LogbookError is every failure of a call: the server's problem (code,
 * status, detail and details) or CONNECTION_FAILED (status 0). Test the
 * code, never the message. */
export class LogbookError extends Error {
    /** The logbook code, e.g. "SEQ_CONFLICT" (docs/errors.md). */
    code;
    /** The HTTP status; 0 when the server did not answer. */
    status;
    detail;
    /** Of a failed append: how many of its events were appended, from firstSeq. */
    appended;
    firstSeq;
    /** Of SEQ_CONFLICT: the log length expected and the one found. */
    expected;
    actual;
    /** The rejected NDJSON line (from 1) and input (from 0) of an append. */
    line;
    index;
    /** The offending seq, when the error names one. */
    seq;
    /** A final persistence failure fenced the session. */
    fenced;
    /** The whole problem document as the server sent it. */
    problem;
    /** LogbookError wraps a problem; cause is the underlying failure, if any. */
    constructor(problem, cause) {
        super(`logbook: ${problem.code}: ${problem.detail}`, cause === undefined ? undefined : { cause });
        this.name = "LogbookError";
        this.problem = problem;
        this.code = problem.code;
        this.status = problem.status;
        this.detail = problem.detail;
        this.appended = problem.appended;
        this.firstSeq = problem.firstSeq;
        this.expected = problem.expected;
        this.actual = problem.actual;
        this.line = problem.line;
        this.index = problem.index;
        this.seq = problem.seq;
        this.fenced = problem.fenced === true || problem.code === "SESSION_FENCED";
    }
}
/** retryable reports whether a failed call may pass when repeated: the
 * server or a plugin unavailable, an I/O error, a busy backend, the
 * server's cap on live sessions reached (max_live_sessions), no answer at
 * all, or a failed flush of a session that is not fenced. */
export function retryable(err) {
    if (!(err instanceof LogbookError))
        return false;
    switch (err.code) {
        case "IO_ERROR":
        case "BACKEND_BUSY":
        case "TOO_MANY_LIVE_SESSIONS":
        case "PLUGIN_UNAVAILABLE":
        case CONNECTION_FAILED:
            return true;
        case "FLUSH_FAILED":
            return !err.fenced;
    }
    return false;
}
