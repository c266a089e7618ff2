import { CONNECTION_FAILED, LogbookError, retryable } from "./errors.js";
import { Event } from "./events.js";
import { encodeJSON } from "./json.js";
import { readEvents } from "./sse.js";
/** Client talks to the /v1 API of one `logbook serve`. Its methods may be
 * called concurrently. */
export class Client {
    baseUrl;
    /** The tenant every call addresses (ClientOptions.tenant); undefined for the credential's own. */
    tenant;
    #token;
    #fetch;
    constructor(o) {
        this.baseUrl = o.baseUrl.replace(/\/+$/, "");
        this.#token = o.token;
        this.tenant = o.tenant;
        this.#fetch = o.fetch ?? globalThis.fetch;
    }
    /** whoami returns the credential the server sees: its name, tenant and role. */
    async whoami() {
        return (await (await this.call("GET", "/v1/whoami")).json());
    }
    /** create makes a new session (id default: a generated one) with the header fields of o and returns it. */
    async create(o = {}) {
        const res = await this.call("POST", "/v1/sessions", { json: o });
        const header = (await res.json());
        return new Session(this, header.id, header);
    }
    /** session returns the handle of session id, without a request. */
    session(id) {
        return new Session(this, id);
    }
    /** list returns one page of the sessions: by id, most recent first, or most recently active first. */
    async list(o = {}) {
        return (await (await this.call("GET", "/v1/sessions", { query: o })).json());
    }
    /** openapi returns the OpenAPI document of the server's /v1 API. */
    async openapi() {
        return (await (await this.call("GET", "/v1/openapi.json")).json());
    }
    /** call sends one request and returns the successful response; a problem answer or no answer throws LogbookError. */
    async call(method, path, c = {}) {
        const url = new URL(this.baseUrl + path);
        for (const [k, v] of Object.entries(c.query ?? {})) {
            if (v !== undefined)
                url.searchParams.set(k, String(v));
        }
        const headers = { ...c.headers };
        if (this.#token !== undefined)
            headers["Authorization"] = `Bearer ${this.#token}`;
        if (this.tenant !== undefined) {
            if (path.startsWith("/v1/"))
                url.searchParams.set("tenant", this.tenant);
            else
                headers["Logbook-Tenant"] = this.tenant;
        }
        let body;
        if (c.json !== undefined) {
            headers["Content-Type"] = "application/json";
            body = encodeJSON(c.json);
        }
        else if (c.ndjson !== undefined) {
            headers["Content-Type"] = "application/x-ndjson";
            body = c.ndjson;
        }
        else if (method === "POST") {
            // A POST says its media type even without a body (flush, release):
            // the server refuses one that does not (UNSUPPORTED_MEDIA_TYPE), so
            // that no web page's form or no-cors fetch passes for a client.
            headers["Content-Type"] = "application/json";
        }
        let res;
        try {
            res = await this.#fetch(url, { method, headers, body, signal: c.signal ?? null });
        }
        catch (err) {
            if (c.signal?.aborted)
                throw err;
            throw new LogbookError({ code: CONNECTION_FAILED, status: 0, detail: `${method} ${url.pathname}: ${String(err)}` }, err);
        }
        if (res.ok)
            return res;
        throw await problemOf(res);
    }
}
async function problemOf(res) {
    const text = await res.text().catch(() => "");
    if ((res.headers.get("Content-Type") ?? "").startsWith("application/problem+json")) {
        try {
            return new LogbookError(JSON.parse(text));
        }
        catch {
            // fall through: not the server's problem document
        }
    }
    return new LogbookError({ code: "UNEXPECTED_RESPONSE", status: res.status, detail: `HTTP ${res.status} without a problem document: ${text.slice(0, 200)}` });
}
/** encodeInput writes one append input as its NDJSON line. */
export function encodeInput(i) {
    const line = { type: i.type, data: i.data };
    if (i.surfaceOp !== undefined)
        line["surfaceOp"] = i.surfaceOp;
    if (i.sourceEventSeqs !== undefined)
        line["sourceEventSeqs"] = i.sourceEventSeqs;
    if (i.ignorable)
        line["ignorable"] = true;
    return encodeJSON(line);
}
function parseNDJSON(text) {
    return text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => new Event(l));
}
function sleep(ms, signal) {
    return new Promise((resolve) => {
        const done = () => {
            clearTimeout(t);
            signal?.removeEventListener("abort", done);
            resolve();
        };
        const t = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
    });
}
/** Session is the handle of one session on the server. */
export class Session {
    client;
    id;
    /** The stored header, when the handle came from create or fork. */
    header;
    constructor(client, id, header) {
        this.client = client;
        this.id = id;
        this.header = header;
    }
    // call sends a request to the session's resource sub ("/events"). The
    // ids "." and ".." go in the query parameter id under the segment "-":
    // fetch parses URLs as the WHATWG URL standard says, which removes those
    // segments from a path, escaped or not.
    #call(method, sub = "", c = {}) {
        if (this.id !== "." && this.id !== "..")
            return this.client.call(method, `/v1/sessions/${encodeURIComponent(this.id)}${sub}`, c);
        return this.client.call(method, `/v1/sessions/-${sub}`, { ...c, query: { ...c.query, id: this.id } });
    }
    /** info returns the header, the log's length, and whether it is live. */
    async info() {
        return (await (await this.#call("GET")).json());
    }
    /** append appends inputs in order and returns their stored events. The
     * first rejected input ends the request: the ones before it stay
     * appended, and the LogbookError says how many (appended, from firstSeq). */
    async append(inputs, o = {}) {
        return this.#append("/events", inputs, o);
    }
    /** appendGroup appends inputs as one atomic group (docs/compaction.md):
     * every one with consecutive seqs, or none; a rejected input throws its
     * LogbookError (line, index), appended 0. With expectedSeq the first
     * input must get that seq. A group holds at most one surface or
     * projection event. */
    async appendGroup(inputs, o = {}) {
        return this.#append("/events/group", inputs, o);
    }
    /** appendOnce appends inputs as one atomic group under operationId, so
     * that a retry of it, from any process and after any restart, never
     * appends twice: when the session already holds the id with the same
     * inputs, nothing is appended and the original events come back with
     * replayed true. Other inputs under a held id throw OPERATION_CONFLICT
     * (firstSeq names the original's first event). */
    async appendOnce(operationId, inputs, o = {}) {
        return this.#send("/events/group", inputs, { ...o, operationId });
    }
    async #append(sub, inputs, o) {
        return (await this.#send(sub, inputs, o)).events;
    }
    async #send(sub, inputs, o) {
        const ndjson = inputs.map((i) => encodeInput(i) + "\n").join("");
        const res = await this.#call("POST", sub, {
            query: { expectedSeq: o.expectedSeq, flush: o.flush || undefined, operationId: o.operationId },
            ndjson,
            signal: o.signal,
        });
        return { events: parseNDJSON(await res.text()), replayed: res.headers.get("Logbook-Replay") === "true" };
    }
    /** appendRetry appends inputs at log length expected, retrying what may
     * pass (see retryable) with backoff. Every attempt carries the expected
     * length, so nothing is appended twice: when an attempt whose answer was
     * lost did append, the next one meets SEQ_CONFLICT, and appendRetry reads
     * the events at expected back and compares them with its inputs (type,
     * data by value, surfaceOp, sourceEventSeqs, ignorable). Its own events
     * count as appended (the rest, if any, are appended after them); another
     * writer's throw the SEQ_CONFLICT. A failure's appended counts the
     * inputs appended over all attempts, from expected. */
    async appendRetry(expected, inputs, o = {}) {
        const r = new Retrier(o);
        const out = [];
        const fail = (err, last = 0) => {
            if (!(err instanceof LogbookError))
                throw err;
            throw new LogbookError({ ...err.problem, appended: out.length + last, firstSeq: expected }, err);
        };
        while (out.length < inputs.length || inputs.length === 0) {
            const at = expected + out.length;
            const rest = inputs.slice(out.length);
            try {
                const evs = await this.append(rest, { expectedSeq: at, flush: o.flush, signal: o.signal });
                return out.concat(evs);
            }
            catch (err) {
                if (err instanceof LogbookError && err.code === "SEQ_CONFLICT" && err.actual !== undefined && err.actual > at && rest.length > 0) {
                    const mine = await this.#ownEvents(r, at, err.actual, rest).catch(fail);
                    out.push(...mine);
                    if (mine.length < rest.length && (mine.length === 0 || at + mine.length !== err.actual))
                        fail(err);
                    o.onRetry?.(err);
                    continue;
                }
                if (!(await r.again(err))) {
                    fail(err, err instanceof LogbookError && err.firstSeq === at ? err.appended ?? 0 : 0);
                }
            }
        }
        if (o.flush) {
            for (;;) {
                try {
                    await this.flush(o.signal);
                    break;
                }
                catch (err) {
                    if (err instanceof LogbookError && err.code === "SESSION_NOT_LIVE")
                        break; // read from storage: durable already
                    if (!(await r.again(err)))
                        fail(err);
                }
            }
        }
        return out;
    }
    // ownEvents reads [at, end) and returns its leading events that are the
    // inputs' own, stopping at the first that is not.
    async #ownEvents(r, at, end, inputs) {
        end = Math.min(end, at + inputs.length);
        for (;;) {
            let stored;
            try {
                stored = await this.events({ from: at, to: end, signal: r.signal });
            }
            catch (err) {
                if (await r.again(err))
                    continue;
                throw err;
            }
            const mine = [];
            for (const ev of stored) {
                if (!sameEvent(ev, inputs[mine.length]))
                    break;
                mine.push(ev);
            }
            return mine;
        }
    }
    /** events reads the log [from, to) (defaults: all of it). */
    async events(o = {}) {
        const res = await this.#call("GET", "/events", { query: { from: o.from, to: o.to }, signal: o.signal });
        return parseNDJSON(await res.text());
    }
    /** follow yields the log's events from o.from, then each event as it is
     * appended, over Server-Sent Events. A dropped stream (the server
     * restarted, the connection broke) is reconnected with backoff from the
     * event after the last one yielded, with Last-Event-ID: no gap, no
     * duplicate; so is a stream silent for o.idleTimeoutMs. It ends at o.to,
     * when o.signal aborts, or when the loop breaks; a problem that no retry
     * can cure (SESSION_NOT_FOUND) throws. */
    async *follow(o = {}) {
        let next = o.from ?? 0;
        const base = o.backoffMs ?? 50;
        let wait = base;
        while (o.to === undefined || next < o.to) {
            if (o.signal?.aborted)
                return;
            const ac = new AbortController();
            const onAbort = () => ac.abort();
            o.signal?.addEventListener("abort", onAbort, { once: true });
            const idle = o.idleTimeoutMs ?? 60_000;
            let timer = setTimeout(() => ac.abort(), idle);
            const alive = () => {
                clearTimeout(timer);
                timer = setTimeout(() => ac.abort(), idle);
            };
            try {
                const headers = { Accept: "text/event-stream" };
                if (next > 0)
                    headers["Last-Event-ID"] = String(next - 1);
                const res = await this.#call("GET", "/events", { query: { from: next, to: o.to }, headers, signal: ac.signal });
                for await (const se of readEvents(res.body, alive)) {
                    const ev = new Event(se.data);
                    if (ev.seq < next)
                        continue;
                    wait = base;
                    next = ev.seq + 1;
                    yield ev;
                }
                if (o.to !== undefined && next >= o.to)
                    return;
                o.onReconnect?.(new Error("the event stream ended"));
            }
            catch (err) {
                if (o.signal?.aborted)
                    return;
                if (err instanceof LogbookError && !retryable(err))
                    throw err;
                o.onReconnect?.(err);
            }
            finally {
                clearTimeout(timer);
                o.signal?.removeEventListener("abort", onAbort);
                ac.abort();
            }
            await sleep(wait, o.signal);
            wait = Math.min(2 * wait, o.maxBackoffMs ?? 1000);
        }
    }
    async messages(o = {}) {
        const body = await this.text("messages", o);
        return o.format === "markdown" ? body : JSON.parse(body);
    }
    /** transcript returns the events that appended a message, as recorded. */
    async transcript() {
        return JSON.parse(await this.text("transcript"));
    }
    /** surface returns the seqs of the surface nodes, in surface order. */
    async surface(o = {}) {
        return JSON.parse(await this.text("surface", o));
    }
    /** requestHeader returns the folded request header, null when the log has none. */
    async requestHeader(o = {}) {
        return JSON.parse(await this.text("header", o));
    }
    async request(o = {}) {
        return JSON.parse(await this.text("request", o));
    }
    /** why returns the provenance tree of event seq. */
    async why(seq) {
        return JSON.parse(await this.text("why", { seq }));
    }
    /** shadowed returns the nodes replacements took off the surface, as after event at (default: now). */
    async shadowed(o = {}) {
        return JSON.parse(await this.text("shadowed", o));
    }
    /** tokens returns the token estimate of the next request, as after event at (default: now). */
    async tokens(o = {}) {
        return JSON.parse(await this.text("tokens", o));
    }
    /** lineage returns the session's fork family. */
    async lineage() {
        return JSON.parse(await this.text("lineage"));
    }
    /** inspect returns the open turn and the repair a resume would append. */
    async inspect() {
        return JSON.parse(await this.text("inspect"));
    }
    /** text returns a view's document exactly as the server sent it: the
     * canonical bytes, for comparing or for a lossless parser. */
    async text(view, o = {}) {
        const res = await this.#call("GET", "/" + view, { query: { at: o.at, format: o.format, seq: o.seq } });
        return (await res.text()).replace(/\n$/, "");
    }
    /** open resumes the stored session for write (closing an interrupted
     * turn, cutting a torn tail) and keeps it live, or finds it live; an
     * append resumes a session by itself, so open is for reading the repair
     * before the first write. */
    async open() {
        return (await (await this.#call("POST", "/open")).json());
    }
    /** fork makes a live child keeping the events up to at (default: all), with id as (default: generated). */
    async fork(o = {}) {
        const res = await this.#call("POST", "/fork", { json: o });
        const header = (await res.json());
        return new Session(this.client, header.id, header);
    }
    /** flush makes every appended event durable on every backend. */
    async flush(signal) {
        return (await (await this.#call("POST", "/flush", { signal })).json());
    }
    /** compact runs a manual compaction and returns the events it appended. */
    async compact(o = {}) {
        const res = await this.#call("POST", "/compact", { json: o });
        return parseNDJSON(await res.text());
    }
    /** release flushes the session and lets the server drop it. */
    async release() {
        await this.#call("POST", "/release");
    }
    /** delete deletes the stored session from every backend, audited with
     * by "api" and the reason: a live session is ALREADY_OWNED (release it
     * first), a held one SESSION_HELD. */
    async delete(o = {}) {
        await this.#call("DELETE", "", { query: { reason: o.reason } });
    }
    /** hold puts a legal hold on the stored session: delete and retention refuse it until releaseHold. */
    async hold(o = {}) {
        return (await (await this.#call("POST", "/hold", { json: o })).json());
    }
    /** releaseHold lifts the legal hold. */
    async releaseHold(o = {}) {
        return (await (await this.#call("POST", "/release-hold", { json: o })).json());
    }
}
/** The backoff and attempt count of one appendRetry. */
class Retrier {
    signal;
    #o;
    #attempts = 0;
    #wait;
    constructor(o) {
        this.#o = o;
        this.signal = o.signal;
        this.#wait = o.backoffMs ?? 10;
    }
    // again waits out the backoff and returns true when err may pass on a
    // retry and attempts remain.
    async again(err) {
        this.#attempts++;
        if (!retryable(err) || this.signal?.aborted)
            return false;
        if (this.#o.maxAttempts !== undefined && this.#attempts >= this.#o.maxAttempts)
            return false;
        this.#o.onRetry?.(err);
        await sleep(this.#wait, this.signal);
        this.#wait = Math.min(2 * this.#wait, this.#o.maxBackoffMs ?? 1000);
        return !this.signal?.aborted;
    }
}
/** sameEvent reports whether a stored event is the one input would append. */
export function sameEvent(ev, input) {
    if (ev.type !== input.type || ev.ignorable !== (input.ignorable === true))
        return false;
    if (!sameSurfaceOp(ev.surfaceOp, input.surfaceOp))
        return false;
    if ((ev.sourceEventSeqs === undefined) !== (input.sourceEventSeqs === undefined))
        return false;
    if (ev.sourceEventSeqs && ev.sourceEventSeqs.join(",") !== input.sourceEventSeqs.join(","))
        return false;
    const stored = ev.dataText;
    const mine = encodeJSON(input.data);
    // The stored data is canonical; a builder's is too, so the texts match.
    // Other JSON (spacing, \u escapes) is compared by value.
    return stored === mine || deepEqual(JSON.parse(stored), JSON.parse(mine));
}
function sameSurfaceOp(a, b) {
    if (a === undefined || b === undefined)
        return a === b;
    if (a === "append" || b === "append")
        return a === b;
    return a.startSeq === b.startSeq && a.endSeq === b.endSeq;
}
function deepEqual(a, b) {
    if (a === b)
        return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null)
        return false;
    if (Array.isArray(a) !== Array.isArray(b))
        return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length)
        return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}
