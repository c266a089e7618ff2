// Package @logbook/client/openai-agents: a Session of the OpenAI Agents SDK
// (@openai/agents-core) stored in a logbook session.
import { randomUUID } from "node:crypto";
import { sessionIdFor } from "../adapters/keys.js";
import { LogbookError, retryable } from "../index.js";
import { encodeJSON } from "../json.js";
import { LoopState, Mirror, oneOperation } from "./mirror.js";
/** The type of the adapter's records: the log-only plugin record
 * (docs/format.md, "Ignorable, unknown and plugin types") that holds the
 * SDK's items and every change of its history. */
export const RECORD_TYPE = "plugin:openai-agents/history";
/** The value of the "framework" label of the sessions this adapter creates. */
export const FRAMEWORK = "openai-agents";
/**
 * LogbookSession is a Session of the OpenAI Agents SDK whose history is a
 * logbook session. Every change of the history (addItems, a transaction,
 * a compaction, popItem, clearSession, a mutation) appends one record of
 * type RECORD_TYPE holding the items as given, together with the typed
 * events of its items in one operation (all or nothing; a retry of it is
 * the server's replay), so getItems returns them
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
export class LogbookSession {
    /** The SDK's session id. */
    key;
    /** The handle of the logbook session. */
    session;
    #client;
    #flush;
    #model;
    #maxAttempts;
    #backoffMs;
    #onMirrorError;
    #items = [];
    /** Operation id → its transaction, as stored. */
    #ops = new Map();
    #loop = new LoopState();
    /** Seqs of the stored system/message events (a compaction leaves a leading one alone). */
    #system = new Set();
    /** How much of the log has been folded: the seq the next event gets. */
    #next = 0;
    #ready = false;
    #queue = Promise.resolve();
    constructor(o) {
        this.key = o.key ?? randomUUID();
        this.#client = o.client;
        this.session = o.client.session(sessionIdFor(this.key));
        this.#flush = o.flush ?? true;
        this.#model = o.model ?? { provider: "openai", name: "unknown" };
        this.#maxAttempts = o.maxAttempts ?? 5;
        this.#backoffMs = o.backoffMs ?? 50;
        this.#onMirrorError = o.onMirrorError;
    }
    /** getSessionId returns the SDK's session id (the key). */
    async getSessionId() {
        return this.key;
    }
    /** getItems returns the history (its newest limit items when limit is
     * given), reading what other writers appended first. */
    getItems(limit) {
        return this.#serial(async () => {
            await this.#sync();
            if (limit === undefined)
                return structuredClone(this.#items);
            if (limit <= 0)
                return [];
            return structuredClone(this.#items.slice(-limit));
        });
    }
    /** addItems appends items: one record and their typed events, as one
     * operation under an id of its own (see #write). */
    async addItems(items) {
        if (items.length === 0)
            return;
        const snap = snapshot(items, "addItems");
        await this.#serial(() => this.#write(() => ({ record: { op: "add", items: snap }, mirror: snap })));
    }
    /** popItem removes the newest item from the history and returns it; the
     * log keeps it and records the pop. */
    popItem() {
        return this.#serial(async () => {
            let popped;
            await this.#write(() => {
                popped = this.#items.at(-1);
                return popped === undefined ? undefined : { record: { op: "pop" } };
            });
            return popped === undefined ? undefined : structuredClone(popped);
        });
    }
    /** clearSession empties the history; the log keeps every item and
     * records the clearing. Operation ids stay used. */
    async clearSession() {
        await this.#serial(() => this.#write(() => (this.#items.length === 0 ? undefined : { record: { op: "clear" } })));
    }
    /** replaceHistoryWithCompaction makes items (a compaction item and the
     * suffix it keeps) the whole history. The log keeps the items it
     * replaces; logbook's surface gets a compaction checkpoint in their
     * place (docs/compaction.md), and the kept items their typed events. */
    async replaceHistoryWithCompaction(items) {
        const snap = snapshot(items, "replaceHistoryWithCompaction");
        return this.#serial(async () => {
            await this.#sync();
            const nodes = this.#ready ? (await this.session.tokens()).nodes.map((n) => n.seq) : [];
            // The checkpoint replaces the surface, and a replace must be its
            // operation's one surface event: the kept items' typed events are a
            // second operation.
            await this.#write(() => ({ record: { op: "compaction", items: snap }, inputs: this.#checkpoint(nodes) }));
            await this.#mirrorOnly(snap);
        });
    }
    /** applyHistoryMutations applies the SDK's history mutations (a
     * replacement of a function call) as a record; the typed events keep
     * the call as it was first written. */
    async applyHistoryMutations(args) {
        if (args.mutations.length === 0)
            return;
        const snap = snapshot(args.mutations, "applyHistoryMutations");
        await this.#serial(() => this.#write(() => ({ record: { op: "mutations", mutations: snap } })));
    }
    /**
     * applyHistoryTransaction applies a transaction once: its record and the
     * typed events of the items it adds are one operation under the
     * transaction's operationId (Session.appendOnce), so a retry from any
     * process, after any restart, appends nothing. The same id with the same
     * transaction (compared by value) returns without a change; another
     * transaction under a used id throws OPERATION_CONFLICT; a replace_suffix
     * whose expectedSuffix is not the history's suffix throws SUFFIX_MISMATCH.
     * Both change nothing.
     */
    async applyHistoryTransaction(args) {
        const { operationId, transaction } = args;
        if (typeof operationId !== "string" || operationId.trim() === "") {
            throw new TypeError("openai-agents: a history transaction needs a non-empty operationId");
        }
        const snap = sortKeys(snapshot(transaction, "applyHistoryTransaction"));
        if (snap.type !== "append_items" && snap.type !== "replace_suffix") {
            throw new TypeError(`openai-agents: unknown history transaction type ${JSON.stringify(snap["type"])}`);
        }
        return this.#serial(async () => {
            // The check below needs the ids and items other writers stored.
            await this.#sync();
            await this.#write(() => {
                const record = { op: "transaction", operationId, transaction: snap };
                if (this.#ops.has(operationId)) {
                    // The same transaction is a replay: nothing to write. Another one
                    // is sent as it is, for the server's OPERATION_CONFLICT (its
                    // firstSeq and count name the operation that holds the id).
                    return encodeJSON(this.#ops.get(operationId)) === encodeJSON(snap) ? undefined : { record };
                }
                if (snap.type === "append_items")
                    return { record, mirror: snap.items };
                this.#checkSuffix(snap.expectedSuffix);
                // A replacement that keeps the suffix adds its tail; one that
                // rewrites it is the record only (the typed events keep what was
                // first written).
                return startsWith(snap.replacement, snap.expectedSuffix) ? { record, mirror: snap.replacement.slice(snap.expectedSuffix.length) } : { record };
            }, operationId);
        });
    }
    #checkSuffix(expected) {
        const n = expected.length;
        const actual = this.#items.slice(this.#items.length - n);
        if (n > this.#items.length || encodeJSON(sortKeys(actual)) !== encodeJSON(expected)) {
            throw new LogbookError({
                code: "SUFFIX_MISMATCH",
                status: 409,
                detail: `openai-agents: the history's last ${n} items are not the transaction's expectedSuffix; nothing was changed`,
            });
        }
    }
    // serial runs the adapter's calls one at a time, in call order.
    #serial(f) {
        const run = this.#queue.then(f, f);
        this.#queue = run.catch(() => undefined);
        return run;
    }
    // sync folds the events appended since the last fold; the first call
    // reads the whole log. A session that is not stored reads as empty, and
    // create makes it (a read creates nothing). A read the server does not
    // answer is retried as a write is.
    async #sync(create = false) {
        let attempts = 0;
        let wait = this.#backoffMs;
        for (;;) {
            try {
                let evs;
                try {
                    evs = await this.session.events({ from: this.#next });
                }
                catch (err) {
                    if (this.#ready || !(err instanceof LogbookError) || err.code !== "SESSION_NOT_FOUND")
                        throw err;
                    if (!create)
                        return;
                    await this.#create();
                    evs = await this.session.events({ from: this.#next });
                }
                this.#ready = true;
                for (const e of evs)
                    this.#fold(e);
                return;
            }
            catch (err) {
                if (!retryable(err) || ++attempts >= this.#maxAttempts)
                    throw err;
                await sleep(wait);
                wait = Math.min(2 * wait, 1000);
            }
        }
    }
    async #create() {
        try {
            await this.#client.create({ id: this.session.id, labels: { framework: FRAMEWORK, key: this.key } });
        }
        catch (err) {
            if (!(err instanceof LogbookError) || err.code !== "SESSION_ALREADY_EXISTS")
                throw err;
        }
    }
    #fold(e) {
        if (e.seq !== this.#next)
            throw new Error(`openai-agents: read seq ${e.seq} where ${this.#next} was next`);
        this.#next = e.seq + 1;
        this.#loop.fold(e);
        if (e.type === "system/message")
            this.#system.add(e.seq);
        if (e.type !== RECORD_TYPE)
            return;
        const d = e.data;
        switch (d["op"]) {
            case "add":
                this.#items.push(...d["items"]);
                break;
            case "transaction": {
                const t = d["transaction"];
                this.#ops.set(d["operationId"], t);
                if (t.type === "replace_suffix")
                    this.#items.splice(this.#items.length - t.expectedSuffix.length, t.expectedSuffix.length, ...t.replacement);
                else
                    this.#items.push(...t.items);
                break;
            }
            case "compaction":
                this.#items = [...d["items"]];
                break;
            case "pop":
                this.#items.pop();
                break;
            case "clear":
                this.#items = [];
                break;
            case "mutations":
                this.#items = mutate(this.#items, d["mutations"]);
                break;
        }
    }
    // write syncs, builds a plan with build (undefined: nothing to write)
    // and appends it as one operation (Session.appendOnce: its record and
    // typed events together, all or nothing) at the log's length, so that
    // nothing another writer appended meanwhile is overlooked: when the log
    // moved (SEQ_CONFLICT), it syncs and builds again.
    //
    // The operation id is operationId (a transaction's) or one drawn at
    // random for this call and kept over all its attempts. An attempt the
    // server did not answer is sent again unchanged (same events, same id):
    // when it had landed, the server replays it and appends nothing (after
    // a restart of the server too: the id is stored with the events); when
    // it had not, it is appended now. A random id rather than one derived
    // from the log length and the items, because two writers adding equal
    // items at the same length make two writes, which a derived id would
    // merge into one.
    //
    // When the server refuses one of the typed events (the loop state it
    // holds is not the one the adapter folded), the write is made again as
    // its record alone and onMirrorError is told: the items are kept.
    async #write(build, operationId) {
        if (!this.#ready)
            await this.#sync();
        const id = operationId ?? `oa-${randomUUID()}`;
        let attempts = 0;
        let wait = this.#backoffMs;
        let bare = false;
        // The last attempt the server did not answer: it may have landed.
        let unanswered;
        for (;;) {
            let plan;
            if (!unanswered) {
                plan = build();
                if (!plan)
                    return;
                if (!this.#ready) {
                    await this.#sync(true); // the first write creates the session
                    continue;
                }
                if (bare)
                    plan = { record: plan.record };
            }
            const at = unanswered?.at ?? this.#next;
            const inputs = unanswered?.inputs ?? this.#inputs(plan, at);
            try {
                const r = await this.session.appendOnce(id, inputs, { expectedSeq: at, flush: this.#flush });
                if (r.replayed)
                    await this.#sync();
                else
                    for (const e of r.events)
                        this.#fold(e);
                return;
            }
            catch (err) {
                if (!(err instanceof LogbookError))
                    throw err;
                if (err.code === "SEQ_CONFLICT") {
                    unanswered = undefined;
                    await this.#sync();
                    continue;
                }
                if (err.code === "OPERATION_CONFLICT") {
                    // Another writer stored the id meanwhile: build again against
                    // its events (the same transaction is a replay, another one is
                    // build's OPERATION_CONFLICT); events under the id that are not
                    // a write of this adapter's are the server's conflict.
                    await this.#sync();
                    if (build() === undefined)
                        return;
                    throw err;
                }
                if (plan?.record && !bare && inputs.length > 1 && (err.index ?? 0) > 0 && !retryable(err)) {
                    this.#onMirrorError?.(err);
                    bare = true;
                    continue;
                }
                if (!retryable(err) || ++attempts >= this.#maxAttempts)
                    throw err;
                unanswered = { inputs, at };
                await sleep(wait);
                wait = Math.min(2 * wait, 1000);
            }
        }
    }
    // inputs are a plan's events: its record, then its extra inputs, then
    // the typed events of its items (those one operation may hold: see
    // oneOperation). Message ids are "oa-<seq of the write's first
    // event>-<index of the item>".
    #inputs(plan, at) {
        const out = [];
        if (plan.record)
            out.push({ type: RECORD_TYPE, data: plan.record, ignorable: true });
        out.push(...(plan.inputs ?? []));
        if (plan.mirror)
            out.push(...new Mirror(this.#loop, this.#model, `oa-${at}`).items(plan.mirror).out);
        return oneOperation(out);
    }
    // mirrorOnly appends the typed events of a compaction's kept items, an
    // operation of their own after the compaction's; a failure is reported,
    // not thrown: the items are stored.
    async #mirrorOnly(items) {
        try {
            await this.#write(() => {
                const inputs = new Mirror(this.#loop, this.#model, `oa-${this.#next}`).items(items).out;
                return inputs.length === 0 ? undefined : { inputs };
            });
        }
        catch (err) {
            this.#onMirrorError?.(err);
        }
    }
    // checkpoint returns the events that put a compaction checkpoint in
    // place of the surface nodes (a leading system prompt stays): the
    // bracket of docs/compaction.md, written as one operation with the record.
    #checkpoint(nodes) {
        const shadowed = nodes.length > 0 && this.#system.has(nodes[0]) ? nodes.slice(1) : nodes;
        if (shadowed.length === 0)
            return [];
        const id = `oa-compaction-${this.#next}`;
        const turn = this.#loop.openTurn >= 0 ? this.#loop.openTurn : null;
        const first = shadowed[0];
        const last = shadowed[shadowed.length - 1];
        const text = "The OpenAI Agents SDK compacted the conversation before this point; its summary is the provider's compaction item, which logbook cannot read.";
        return [
            { type: "compaction/start", data: { compactionId: id, turn } },
            {
                type: "compaction/summary",
                data: {
                    compactionId: id,
                    summary: [{ type: "text", text }],
                    shadowedRange: { start: first, end: last },
                    shadowedSeqs: shadowed,
                    shadowedTokenCount: 0,
                    provider: this.#model.provider,
                    model: this.#model.name,
                },
            },
            {
                type: "user/message",
                data: { id, role: "user", content: [{ type: "text", text }], source: { kind: "compact-checkpoint", compactionId: id } },
                surfaceOp: { op: "replace", startSeq: first, endSeq: last },
                sourceEventSeqs: shadowed,
            },
            { type: "compaction/end", data: { compactionId: id, turn } },
        ];
    }
}
// ---- items ----
// snapshot returns a JSON copy of v, refusing what JSON cannot hold
// (logbook stores JSON): a function, a symbol, a bigint, a number that is
// not finite, a class instance (Uint8Array, Date, Map, …), undefined in an
// array, or a cycle. Object members whose value is undefined are left out.
function snapshot(v, method) {
    const seen = new Set();
    const walk = (x, path) => {
        if (x === null || typeof x === "string" || typeof x === "boolean")
            return x;
        if (typeof x === "number") {
            if (!Number.isFinite(x))
                refuse(path, `the number ${x}`);
            return x;
        }
        if (typeof x !== "object")
            refuse(path, `a ${typeof x}`);
        const o = x;
        if (seen.has(o))
            refuse(path, "a cycle");
        seen.add(o);
        try {
            if (Array.isArray(o)) {
                return o.map((el, i) => (el === undefined ? refuse(`${path}/${i}`, "undefined") : walk(el, `${path}/${i}`)));
            }
            const proto = Object.getPrototypeOf(o);
            if (proto !== Object.prototype && proto !== null)
                refuse(path, `a ${o.constructor?.name ?? "class"} instance`);
            const out = {};
            for (const [k, el] of Object.entries(o))
                if (el !== undefined)
                    out[k] = walk(el, `${path}/${k}`);
            return out;
        }
        finally {
            seen.delete(o);
        }
    };
    const refuse = (path, what) => {
        throw new TypeError(`openai-agents: ${method}: ${path || "the value"} is ${what}; logbook stores items as JSON values, nothing was written`);
    };
    return walk(v, "");
}
// sortKeys returns v with every object's members in code point order, so
// that equal transactions give equal bytes whatever order their members
// were written in (logbook compares a retried operation byte for byte).
function sortKeys(v) {
    if (Array.isArray(v))
        return v.map(sortKeys);
    if (v === null || typeof v !== "object")
        return v;
    const out = {};
    for (const k of Object.keys(v).sort())
        out[k] = sortKeys(v[k]);
    return out;
}
function startsWith(items, prefix) {
    return prefix.length <= items.length && encodeJSON(sortKeys(items.slice(0, prefix.length))) === encodeJSON(sortKeys(prefix));
}
// mutate applies the SDK's history mutations: replace_function_call puts
// the replacement where the first function call with its call id was and
// drops the others with that id.
function mutate(items, mutations) {
    let out = items;
    for (const m of mutations) {
        if (m.type !== "replace_function_call")
            continue;
        let kept = false;
        out = out.flatMap((it) => {
            if (it.type !== "function_call" || it.callId !== m.callId)
                return [it];
            if (kept)
                return [];
            kept = true;
            return [m.replacement];
        });
    }
    return out;
}
function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
