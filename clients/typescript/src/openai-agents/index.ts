// Package @logbook/client/openai-agents: a Session of the OpenAI Agents SDK
// (@openai/agents-core) stored in a logbook session.

import type {
  AgentInputItem,
  SessionHistoryMutation,
  SessionHistoryRewriteArgs,
  SessionHistoryRewriteAwareSession,
  SessionHistoryTransaction,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from "@openai/agents-core";
import { randomUUID } from "node:crypto";
import { sessionIdFor } from "../adapters/keys.js";
import { Client, LogbookError, retryable, sameEvent, type Event, type Input, type Session as LogbookHandle } from "../index.js";
import { encodeJSON } from "../json.js";
import { LoopState, Mirror, type MirrorModel } from "./mirror.js";

export type { MirrorModel } from "./mirror.js";

/** The type of the adapter's records: the log-only plugin record
 * (docs/format.md, "Ignorable, unknown and plugin types") that holds the
 * SDK's items and every change of its history. */
export const RECORD_TYPE = "plugin:openai-agents/history";

/** The value of the "framework" label of the sessions this adapter creates. */
export const FRAMEWORK = "openai-agents";

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

type Item = AgentInputItem;
type Rec = Record<string, unknown>;

/** One write: its record (absent for a mirror-only append), extra inputs
 * that follow the record, and the items whose typed events come last. */
interface Plan {
  record?: Rec;
  inputs?: Input<unknown>[];
  mirror?: readonly unknown[];
  /** The inputs form one atomic group (compaction). */
  group?: boolean;
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
export class LogbookSession implements SessionHistoryTransactionAwareSession, SessionHistoryRewriteAwareSession {
  /** The SDK's session id. */
  readonly key: string;
  /** The handle of the logbook session. */
  readonly session: LogbookHandle;
  readonly #client: Client;
  readonly #flush: boolean;
  readonly #model: MirrorModel;
  readonly #maxAttempts: number;
  readonly #backoffMs: number;
  readonly #onMirrorError: ((err: unknown) => void) | undefined;
  #items: Item[] = [];
  /** Operation id → its transaction, as stored. */
  #ops = new Map<string, { transaction: unknown; seq: number }>();
  #loop = new LoopState();
  /** Seqs of the stored system/message events (a compaction leaves a leading one alone). */
  #system = new Set<number>();
  /** How much of the log has been folded: the seq the next event gets. */
  #next = 0;
  #ready = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(o: LogbookSessionOptions) {
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
  async getSessionId(): Promise<string> {
    return this.key;
  }

  /** getItems returns the history (its newest limit items when limit is
   * given), reading what other writers appended first. */
  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.#serial(async () => {
      await this.#sync();
      if (limit === undefined) return structuredClone(this.#items);
      if (limit <= 0) return [];
      return structuredClone(this.#items.slice(-limit));
    });
  }

  /** addItems appends items: one record, and their typed events. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const snap = snapshot(items, "addItems");
    await this.#serial(() => this.#write(() => ({ record: { op: "add", items: snap }, mirror: snap })));
  }

  /** popItem removes the newest item from the history and returns it; the
   * log keeps it and records the pop. */
  popItem(): Promise<AgentInputItem | undefined> {
    return this.#serial(async () => {
      let popped: Item | undefined;
      await this.#write(() => {
        popped = this.#items.at(-1);
        return popped === undefined ? undefined : { record: { op: "pop" } };
      });
      return popped === undefined ? undefined : structuredClone(popped);
    });
  }

  /** clearSession empties the history; the log keeps every item and
   * records the clearing. Operation ids stay used. */
  async clearSession(): Promise<void> {
    await this.#serial(() => this.#write(() => (this.#items.length === 0 ? undefined : { record: { op: "clear" } })));
  }

  /** replaceHistoryWithCompaction makes items (a compaction item and the
   * suffix it keeps) the whole history. The log keeps the items it
   * replaces; logbook's surface gets a compaction checkpoint in their
   * place (docs/compaction.md), and the kept items their typed events. */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    const snap = snapshot(items, "replaceHistoryWithCompaction");
    return this.#serial(async () => {
      await this.#sync();
      const nodes = this.#ready ? (await this.session.tokens()).nodes.map((n) => n.seq) : [];
      await this.#write(() => ({ record: { op: "compaction", items: snap }, inputs: this.#checkpoint(nodes), group: true }));
      await this.#mirrorOnly(snap);
    });
  }

  /** applyHistoryMutations applies the SDK's history mutations (a
   * replacement of a function call) as a record; the typed events keep
   * the call as it was first written. */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    if (args.mutations.length === 0) return;
    const snap = snapshot(args.mutations, "applyHistoryMutations");
    await this.#serial(() => this.#write(() => ({ record: { op: "mutations", mutations: snap } })));
  }

  /**
   * applyHistoryTransaction applies a transaction once: its record is
   * appended with the transaction's operationId as logbook's operation id
   * (Session.appendOnce), so a retry from any process, after any restart,
   * appends nothing. The same id with the same transaction (compared by
   * value) returns without a change; another transaction under a used id
   * throws OPERATION_CONFLICT; a replace_suffix whose expectedSuffix is not
   * the history's suffix throws SUFFIX_MISMATCH. Both change nothing.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    const { operationId, transaction } = args;
    if (typeof operationId !== "string" || operationId.trim() === "") {
      throw new TypeError("openai-agents: a history transaction needs a non-empty operationId");
    }
    const snap = sortKeys(snapshot(transaction, "applyHistoryTransaction")) as SessionHistoryTransaction;
    if (snap.type !== "append_items" && snap.type !== "replace_suffix") {
      throw new TypeError(`openai-agents: unknown history transaction type ${JSON.stringify((snap as Rec)["type"])}`);
    }
    return this.#serial(async () => {
      // The check below needs the ids and items other writers stored.
      await this.#sync();
      const written = await this.#write(() => {
        const held = this.#ops.get(operationId);
        if (held) {
          if (encodeJSON(held.transaction) !== encodeJSON(snap)) {
            throw new LogbookError({
              code: "OPERATION_CONFLICT",
              status: 409,
              detail: `openai-agents: operation ${JSON.stringify(operationId)} was applied with another transaction (seq ${held.seq})`,
              firstSeq: held.seq,
              meta: { count: "1", operationId },
            });
          }
          return undefined; // a replay
        }
        if (snap.type === "replace_suffix") this.#checkSuffix(snap.expectedSuffix);
        return { record: { op: "transaction", operationId, transaction: snap } };
      }, operationId);
      if (!written) return; // its record's writer wrote the typed events
      if (snap.type === "append_items") await this.#mirrorOnly(snap.items);
      else if (startsWith(snap.replacement, snap.expectedSuffix)) await this.#mirrorOnly(snap.replacement.slice(snap.expectedSuffix.length));
    });
  }

  #checkSuffix(expected: Item[]): void {
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
  #serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(f, f);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  // sync folds the events appended since the last fold; the first call
  // reads the whole log. A session that is not stored reads as empty, and
  // create makes it (a read creates nothing). A read the server does not
  // answer is retried as a write is.
  async #sync(create = false): Promise<void> {
    let attempts = 0;
    let wait = this.#backoffMs;
    for (;;) {
      try {
        let evs: Event[];
        try {
          evs = await this.session.events({ from: this.#next });
        } catch (err) {
          if (this.#ready || !(err instanceof LogbookError) || err.code !== "SESSION_NOT_FOUND") throw err;
          if (!create) return;
          await this.#create();
          evs = await this.session.events({ from: this.#next });
        }
        this.#ready = true;
        for (const e of evs) this.#fold(e);
        return;
      } catch (err) {
        if (!retryable(err) || ++attempts >= this.#maxAttempts) throw err;
        await sleep(wait);
        wait = Math.min(2 * wait, 1000);
      }
    }
  }

  async #create(): Promise<void> {
    try {
      await this.#client.create({ id: this.session.id, labels: { framework: FRAMEWORK, key: this.key } });
    } catch (err) {
      if (!(err instanceof LogbookError) || err.code !== "SESSION_ALREADY_EXISTS") throw err;
    }
  }

  #fold(e: Event): void {
    if (e.seq !== this.#next) throw new Error(`openai-agents: read seq ${e.seq} where ${this.#next} was next`);
    this.#next = e.seq + 1;
    this.#loop.fold(e);
    if (e.type === "system/message") this.#system.add(e.seq);
    if (e.type !== RECORD_TYPE) return;
    const d = e.data as Rec;
    switch (d["op"]) {
      case "add":
        this.#items.push(...(d["items"] as Item[]));
        break;
      case "transaction": {
        const t = d["transaction"] as SessionHistoryTransaction;
        this.#ops.set(d["operationId"] as string, { transaction: t, seq: e.seq });
        if (t.type === "replace_suffix") this.#items.splice(this.#items.length - t.expectedSuffix.length, t.expectedSuffix.length, ...t.replacement);
        else this.#items.push(...t.items);
        break;
      }
      case "compaction":
        this.#items = [...(d["items"] as Item[])];
        break;
      case "pop":
        this.#items.pop();
        break;
      case "clear":
        this.#items = [];
        break;
      case "mutations":
        this.#items = mutate(this.#items, d["mutations"] as SessionHistoryMutation[]);
        break;
    }
  }

  // write syncs, builds a plan with build (undefined: nothing to write)
  // and appends it at the log's length, so that nothing another writer
  // appended meanwhile is overlooked: when the log moved, it syncs and
  // builds again. A write the server did not answer is retried; when it
  // had landed, the retry finds it instead of appending it twice.
  // It returns false when it wrote nothing: build had nothing to write,
  // or the server held operationId already (a replay).
  async #write(build: () => Plan | undefined, operationId?: string): Promise<boolean> {
    if (!this.#ready) await this.#sync();
    let attempts = 0;
    let wait = this.#backoffMs;
    // The last attempt the server did not answer: it may have landed.
    let unknown: { inputs: Input<unknown>[]; at: number; err: LogbookError } | undefined;
    for (;;) {
      if (unknown) {
        const landed = await this.#landed(unknown.inputs, unknown.at);
        if (landed === undefined) {
          if (++attempts >= this.#maxAttempts) throw unknown.err;
          await sleep(wait);
          wait = Math.min(2 * wait, 1000);
          continue;
        }
        if (landed) return true;
        unknown = undefined;
      }
      const plan = build();
      if (!plan) return false;
      if (!this.#ready) {
        await this.#sync(true); // the first write creates the session
        continue;
      }
      const at = this.#next;
      const inputs = this.#inputs(plan, at);
      try {
        const stored = await this.#append(inputs, at, plan.group === true || operationId !== undefined, operationId);
        if (stored === undefined) {
          await this.#sync();
          return false;
        }
        for (const e of stored) this.#fold(e);
        return true;
      } catch (err) {
        if (!(err instanceof LogbookError)) throw err;
        if (err.code === "SEQ_CONFLICT") {
          await this.#sync();
          continue;
        }
        if (plan.record && (err.appended ?? 0) > 0 && err.firstSeq === at) {
          // The record landed, one of its typed events was refused.
          this.#onMirrorError?.(err);
          await this.#sync();
          return true;
        }
        if (!retryable(err) || ++attempts >= this.#maxAttempts) throw err;
        unknown = { inputs, at, err };
        await sleep(wait);
        wait = Math.min(2 * wait, 1000);
      }
    }
  }

  // landed reports whether a write that got no answer is in the log at at
  // (and then folds it), or undefined while the server does not answer.
  async #landed(inputs: Input<unknown>[], at: number): Promise<boolean | undefined> {
    try {
      const evs = await this.session.events({ from: at, to: at + 1 });
      await this.#sync();
      return evs.length > 0 && sameEvent(evs[0]!, inputs[0]!);
    } catch (err) {
      if (retryable(err)) return undefined;
      throw err;
    }
  }

  // append appends inputs at at and returns the stored events, or
  // undefined for a replayed operation (its events are older: sync).
  async #append(inputs: Input<unknown>[], at: number, group: boolean, operationId: string | undefined): Promise<Event[] | undefined> {
    const o = { expectedSeq: at, flush: this.#flush };
    if (operationId !== undefined) {
      const r = await this.session.appendOnce(operationId, inputs, o);
      return r.replayed ? undefined : r.events;
    }
    return group ? this.session.appendGroup(inputs, o) : this.session.append(inputs, o);
  }

  // inputs are a plan's events: its record, then its extra inputs, then
  // the typed events of its items. Message ids are "oa-<seq of the
  // write's first event>-<index of the item>".
  #inputs(plan: Plan, at: number): Input<unknown>[] {
    const out: Input<unknown>[] = [];
    if (plan.record) out.push({ type: RECORD_TYPE, data: plan.record, ignorable: true });
    out.push(...(plan.inputs ?? []));
    if (plan.mirror) out.push(...new Mirror(this.#loop, this.#model, `oa-${at}`).items(plan.mirror).out);
    return out;
  }

  // mirrorOnly appends the typed events of items written by a record of
  // their own (a transaction, a compaction); a failure is reported, not
  // thrown: the items are stored.
  async #mirrorOnly(items: readonly unknown[]): Promise<void> {
    try {
      await this.#write(() => {
        const inputs = new Mirror(this.#loop, this.#model, `oa-${this.#next}`).items(items).out;
        return inputs.length === 0 ? undefined : { inputs };
      });
    } catch (err) {
      this.#onMirrorError?.(err);
    }
  }

  // checkpoint returns the events that put a compaction checkpoint in
  // place of the surface nodes (a leading system prompt stays): the
  // bracket of docs/compaction.md, written as one group with the record.
  #checkpoint(nodes: number[]): Input<unknown>[] {
    const shadowed = nodes.length > 0 && this.#system.has(nodes[0]!) ? nodes.slice(1) : nodes;
    if (shadowed.length === 0) return [];
    const id = `oa-compaction-${this.#next}`;
    const turn = this.#loop.openTurn >= 0 ? this.#loop.openTurn : null;
    const first = shadowed[0]!;
    const last = shadowed[shadowed.length - 1]!;
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
function snapshot<T>(v: T, method: string): T {
  const seen = new Set<object>();
  const walk = (x: unknown, path: string): unknown => {
    if (x === null || typeof x === "string" || typeof x === "boolean") return x;
    if (typeof x === "number") {
      if (!Number.isFinite(x)) refuse(path, `the number ${x}`);
      return x;
    }
    if (typeof x !== "object") refuse(path, `a ${typeof x}`);
    const o = x as object;
    if (seen.has(o)) refuse(path, "a cycle");
    seen.add(o);
    try {
      if (Array.isArray(o)) {
        return o.map((el, i) => (el === undefined ? refuse(`${path}/${i}`, "undefined") : walk(el, `${path}/${i}`)));
      }
      const proto = Object.getPrototypeOf(o);
      if (proto !== Object.prototype && proto !== null) refuse(path, `a ${o.constructor?.name ?? "class"} instance`);
      const out: Rec = {};
      for (const [k, el] of Object.entries(o)) if (el !== undefined) out[k] = walk(el, `${path}/${k}`);
      return out;
    } finally {
      seen.delete(o);
    }
  };
  const refuse = (path: string, what: string): never => {
    throw new TypeError(`openai-agents: ${method}: ${path || "the value"} is ${what}; logbook stores items as JSON values, nothing was written`);
  };
  return walk(v, "") as T;
}

// sortKeys returns v with every object's members in code point order, so
// that equal transactions give equal bytes whatever order their members
// were written in (logbook compares a retried operation byte for byte).
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== "object") return v;
  const out: Rec = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Rec)[k]);
  return out;
}

function startsWith(items: Item[], prefix: Item[]): boolean {
  return prefix.length <= items.length && encodeJSON(sortKeys(items.slice(0, prefix.length))) === encodeJSON(sortKeys(prefix));
}

// mutate applies the SDK's history mutations: replace_function_call puts
// the replacement where the first function call with its call id was and
// drops the others with that id.
function mutate(items: Item[], mutations: SessionHistoryMutation[]): Item[] {
  let out = items;
  for (const m of mutations) {
    if (m.type !== "replace_function_call") continue;
    let kept = false;
    out = out.flatMap((it) => {
      if (it.type !== "function_call" || it.callId !== m.callId) return [it];
      if (kept) return [];
      kept = true;
      return [m.replacement];
    });
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
