// LogbookSaver: a LangGraph checkpoint saver that keeps each thread in one
// logbook session.

import { createHash } from "node:crypto";

import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";

import { sessionIdFor } from "../adapters/keys.js";
import type { Client } from "../client.js";
import { LogbookError, retryable } from "../errors.js";
import type { Input } from "../events.js";
import { isMessageList, messageInputs } from "./messages.js";
import {
  Thread,
  blobBytes,
  checkpointInput,
  encodeBlob,
  writesInput,
  type Blob,
  type ChannelBlob,
  type StoredCheckpoint,
} from "./records.js";

/** The label naming the framework of a session the saver made. */
export const FRAMEWORK = "langgraph";

/** The longest thread id the saver takes: a label value's limit in UTF-8 bytes (docs/format.md). */
export const MAX_THREAD_ID_BYTES = 1024;

/** Options of a LogbookSaver. */
export interface LogbookSaverOptions {
  /** The client of the logbook serve that keeps the threads. */
  client: Client;
  /**
   * Keeps the threads of several applications apart on one server: the
   * session id is made from "<scope>/<thread id>", the header gets the
   * label "scope", and list without a thread id finds only this scope's
   * threads. Default: none.
   */
  scope?: string;
  /** Make every put and putWrites durable on every backend before it returns. */
  flush?: boolean;
  /** Also append the messages of the root namespace's "messages" channel
   * as typed events (user/message, assistant/message, tool/result);
   * default true. */
  messages?: boolean;
  /** The serializer of checkpoints and writes; default LangGraph's JsonPlusSerializer. */
  serde?: SerializerProtocol;
}

/** How many times an append is tried: again after the log moved under it,
 * or after a failure that may pass (retryable: the server unreachable or
 * busy), waiting 10 ms, then twice as long each time up to 1 s. */
const MAX_ATTEMPTS = 8;

/**
 * LogbookSaver is a LangGraph BaseCheckpointSaver backed by logbook: each
 * thread is one strict session whose id is sessionIdFor of the thread id
 * (with the scope in front), labelled framework "langgraph" and key the
 * thread id. A put appends one langgraph/checkpoint event (the checkpoint,
 * its metadata and the values of the channels it changed), a putWrites one
 * langgraph/writes event; both are log-only types logbook keeps byte for
 * byte and never interprets, appended under an operation id made from
 * their content, so a retried put or putWrites is stored once. A put of
 * the root namespace also appends the new messages of its "messages"
 * channel as typed events, in the same atomic operation. deleteThread
 * deletes the session, which a legal hold refuses (SESSION_HELD).
 */
export class LogbookSaver extends BaseCheckpointSaver {
  /** The client of the server that keeps the threads. */
  readonly client: Client;
  /** The scope of the saver's threads (see LogbookSaverOptions.scope). */
  readonly scope: string | undefined;
  /** Whether every put and putWrites is made durable before it returns. */
  readonly flush: boolean;
  /** Whether puts append the messages channel's new messages as typed events. */
  readonly mirrorMessages: boolean;
  readonly #threads = new Map<string, Thread>();
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(o: LogbookSaverOptions) {
    super(o.serde);
    this.client = o.client;
    this.scope = o.scope;
    this.flush = o.flush ?? false;
    this.mirrorMessages = o.messages ?? true;
  }

  /** sessionId returns the id of the session that keeps threadId. */
  sessionId(threadId: string): string {
    return sessionIdFor(this.scope === undefined ? threadId : `${this.scope}/${threadId}`);
  }

  /** getTuple returns the checkpoint config names (its latest when the
   * config has no checkpoint_id), undefined when there is none. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.["thread_id"] as unknown;
    if (threadId === undefined) return undefined;
    checkThreadId(threadId);
    const ns = (config.configurable?.["checkpoint_ns"] as string | undefined) ?? "";
    const t = await this.#read(threadId);
    const byId = t?.checkpoints.get(ns);
    if (!t || !byId) return undefined;
    const id = getCheckpointId(config) || latest(byId.keys());
    const stored = id === undefined ? undefined : byId.get(id);
    if (!stored) return undefined;
    return this.#tuple(t, threadId, ns, stored);
  }

  /** list yields the checkpoints of config's thread (every thread of the
   * scope when it names none) and namespace (every one when it names
   * none), newest first within a namespace: only those before
   * options.before, whose metadata has every member of options.filter,
   * at most options.limit. */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let limit = options.limit;
    const threadId = config.configurable?.["thread_id"] as unknown;
    if (threadId !== undefined) checkThreadId(threadId);
    const wantNs = config.configurable?.["checkpoint_ns"] as string | undefined;
    const wantId = config.configurable?.["checkpoint_id"] as string | undefined;
    const beforeId = before?.configurable?.["checkpoint_id"] as string | undefined;
    const threads = threadId !== undefined ? [threadId] : await this.threadIds();
    for (const tid of threads) {
      const t = await this.#read(tid);
      if (!t) continue;
      for (const [ns, byId] of t.checkpoints) {
        if (wantNs !== undefined && ns !== wantNs) continue;
        for (const id of [...byId.keys()].sort().reverse()) {
          if (wantId && id !== wantId) continue;
          if (beforeId && id >= beforeId) continue;
          const stored = byId.get(id)!;
          if (filter) {
            const metadata = (await this.serde.loadsTyped(stored.metadata.type, blobBytes(stored.metadata))) as Record<string, unknown>;
            if (!Object.entries(filter).every(([k, v]) => metadata[k] === v)) continue;
          }
          if (limit !== undefined) {
            if (limit <= 0) return;
            limit--;
          }
          yield await this.#tuple(t, tid, ns, stored);
        }
      }
    }
  }

  /** put stores checkpoint (with the values of the channels in
   * newVersions) as the child of config's checkpoint and returns its config. */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = config.configurable?.["thread_id"] as unknown;
    if (threadId === undefined) throw new Error("langgraph: put needs config.configurable.thread_id");
    checkThreadId(threadId);
    const ns = (config.configurable?.["checkpoint_ns"] as string | undefined) ?? "";
    const parentId = config.configurable?.["checkpoint_id"] as string | undefined;
    const cp = copyCheckpoint(checkpoint);
    const values = cp.channel_values as Record<string, unknown>;
    cp.channel_values = {};
    const [cpBytes, mdBytes] = await Promise.all([this.serde.dumpsTyped(cp), this.serde.dumpsTyped(metadata)]);
    const channels = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => ({
        channel,
        version,
        bytes: Object.hasOwn(values, channel) ? await this.serde.dumpsTyped(values[channel]) : undefined,
      })),
    );
    const record = (asJSON: boolean): Input<unknown> => {
      const blobs: ChannelBlob[] = channels.map((c) => (c.bytes ? { channel: c.channel, version: c.version, value: encodeBlob(c.bytes, asJSON) } : { channel: c.channel, version: c.version }));
      return checkpointInput({
        ns,
        id: checkpoint.id,
        ...(parentId ? { parentId } : {}),
        checkpoint: encodeBlob(cpBytes, asJSON),
        metadata: encodeBlob(mdBytes, asJSON),
        blobs,
      });
    };
    const opId = operationId("put", [ns, checkpoint.id, parentId ?? "", ...typed(cpBytes), ...typed(mdBytes), ...channels.flatMap((c) => [c.channel, JSON.stringify(c.version), ...(c.bytes ? typed(c.bytes) : [])])]);
    const messages = this.mirrorMessages && ns === "" && isMessageList(values["messages"]) ? values["messages"] : undefined;
    await this.#append(threadId, opId, (t, asJSON) => (messages ? messageInputs(messages, t.loop) : []).concat(record(asJSON)));
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  /** putWrites stores the writes of task taskId against config's checkpoint. */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const threadId = config.configurable?.["thread_id"] as unknown;
    const checkpointId = config.configurable?.["checkpoint_id"] as string | undefined;
    if (threadId === undefined) throw new Error("langgraph: putWrites needs config.configurable.thread_id");
    if (checkpointId === undefined) throw new Error("langgraph: putWrites needs config.configurable.checkpoint_id");
    checkThreadId(threadId);
    const ns = (config.configurable?.["checkpoint_ns"] as string | undefined) ?? "";
    const serialized = await Promise.all(
      writes.map(async ([channel, value], idx) => ({ idx: WRITES_IDX_MAP[channel] || idx, channel, bytes: await this.serde.dumpsTyped(value) })),
    );
    const opId = operationId("writes", [ns, checkpointId, taskId, taskPath, ...serialized.flatMap((w) => [String(w.idx), w.channel, ...typed(w.bytes)])]);
    await this.#append(threadId, opId, (_t, asJSON) => [
      writesInput({ ns, checkpointId, taskId, taskPath, writes: serialized.map((w) => ({ idx: w.idx, channel: w.channel, value: encodeBlob(w.bytes, asJSON) })) }),
    ]);
  }

  /** deleteThread deletes the session of threadId (releasing it first when
   * the server holds it live). A session under a legal hold is not
   * deleted: the LogbookError SESSION_HELD is thrown. A thread that was
   * never stored is nothing to delete. */
  async deleteThread(threadId: string): Promise<void> {
    checkThreadId(threadId);
    const id = this.sessionId(threadId);
    await this.#locked(id, async () => {
      const s = this.client.session(id);
      this.#threads.delete(id);
      try {
        this.#check(threadId, (await s.info()).header.labels);
        await s.delete({ reason: "langgraph deleteThread" });
      } catch (err) {
        if (!(err instanceof LogbookError)) throw err;
        if (err.code === "SESSION_NOT_FOUND") return;
        if (err.code !== "ALREADY_OWNED") throw err;
        await s.release();
        await s.delete({ reason: "langgraph deleteThread" }).catch((e: unknown) => {
          if (!(e instanceof LogbookError && e.code === "SESSION_NOT_FOUND")) throw e;
        });
      }
    });
  }

  // tuple deserializes a stored checkpoint: its channel values from the
  // blobs of its channel versions, and its pending writes in writesSortKey order.
  async #tuple(t: Thread, threadId: string, ns: string, s: StoredCheckpoint): Promise<CheckpointTuple> {
    const checkpoint = (await this.#load(s.checkpoint)) as Checkpoint;
    const values: Record<string, unknown> = {};
    for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
      const b = t.blob(ns, s.id, channel, version);
      if (b) values[channel] = await this.#load(b);
    }
    checkpoint.channel_values = values;
    if (checkpoint.v < 4 && s.parentId !== undefined) {
      // Checkpoints before format 4 kept pending sends as the parent's TASKS writes.
      const sends = await Promise.all(this.#writes(t, ns, s.parentId).filter((w) => w.channel === TASKS).map((w) => this.#load(w.value)));
      values[TASKS] = sends;
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      this.#writes(t, ns, s.id).map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await this.#load(w.value)]),
    );
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: s.id } },
      checkpoint,
      metadata: (await this.#load(s.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (s.parentId !== undefined) tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: s.parentId } };
    return tuple;
  }

  #writes(t: Thread, ns: string, checkpointId: string) {
    const stored = [...(t.writes.get(ns)?.get(checkpointId)?.values() ?? [])];
    return stored.sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
  }

  #load(b: Blob): Promise<unknown> {
    return this.serde.loadsTyped(b.type, blobBytes(b));
  }

  /** threadIds returns the ids of the threads of the saver's scope stored
   * on the server (found by the labels of their sessions). */
  async threadIds(): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.list(cursor === undefined ? {} : { cursor });
      for (const s of page.sessions) {
        const labels = s.header?.labels;
        if (labels?.["framework"] === FRAMEWORK && labels["scope"] === this.scope && labels["key"] !== undefined) out.push(labels["key"]);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return out;
  }

  // read returns the fold of threadId's session, brought up to date; undefined when there is no session.
  #read(threadId: string): Promise<Thread | undefined> {
    const id = this.sessionId(threadId);
    return this.#locked(id, () => this.#fold(threadId, id));
  }

  // fold reads what the log gained since the cached fold: from the last
  // event folded, which must come back unchanged (else the session was
  // deleted and made anew, and everything is read again, after checking
  // that the session is the thread's).
  async #fold(threadId: string, id: string): Promise<Thread | undefined> {
    const s = this.client.session(id);
    let t = this.#threads.get(id);
    try {
      if (t && t.length > 0) {
        const evs = await s.events({ from: t.length - 1 });
        if (evs[0]?.envelope === t.last) {
          for (const e of evs.slice(1)) t.add(e);
          t.stale = false;
          return t;
        }
      }
      this.#check(threadId, (await s.info()).header.labels);
      t = new Thread();
      for (const e of await s.events()) t.add(e);
      this.#threads.set(id, t);
      return t;
    } catch (err) {
      if (err instanceof LogbookError && err.code === "SESSION_NOT_FOUND") {
        this.#threads.delete(id);
        return undefined;
      }
      throw err;
    }
  }

  // append appends build's events to threadId's session (made on first
  // use) under operation id opId, at the log length it was built for: when
  // the log moved (crash repair, another writer) they are built again from
  // the new state; a failure that may pass is tried again (the operation id
  // makes that safe). OPERATION_CONFLICT means the operation is stored already
  // (its id is made from its content); a value logbook's JSON rules refuse
  // (an integer beyond 2^53, nesting deeper than 512) is sent in base64.
  async #append(threadId: string, opId: string, build: (t: Thread, asJSON: boolean) => Input<unknown>[]): Promise<void> {
    const id = this.sessionId(threadId);
    await this.#locked(id, async () => {
      let asJSON = true;
      let fresh = false;
      let wait = 10;
      for (let attempt = 0; ; attempt++) {
        try {
          let t = this.#threads.get(id);
          if (!t || t.stale || fresh) t = await this.#fold(threadId, id);
          if (!t) t = await this.#create(threadId, id);
          const r = await this.client.session(id).appendOnce(opId, build(t, asJSON), { expectedSeq: t.length, flush: this.flush });
          if (!r.replayed && r.events[0]?.seq === t.length) for (const e of r.events) t.add(e);
          else t.stale = true;
          return;
        } catch (err) {
          if (err instanceof LogbookError && err.code === "OPERATION_CONFLICT") {
            const t = this.#threads.get(id);
            if (t) t.stale = true;
            return;
          }
          if (!(err instanceof LogbookError) || attempt + 1 >= MAX_ATTEMPTS) throw err;
          if (err.code === "SEQ_CONFLICT" || err.code === "SESSION_NOT_FOUND") fresh = true;
          else if (retryable(err)) {
            fresh = true;
            await new Promise((resolve) => setTimeout(resolve, wait));
            wait = Math.min(2 * wait, 1000);
          } else if (err.code.startsWith("JSON_") && asJSON) asJSON = false;
          else throw err;
        }
      }
    });
  }

  // create makes the thread's session and returns its empty fold; when
  // another writer made it first, the fold of what it holds (an empty one
  // if it is gone again: the append then meets SESSION_NOT_FOUND).
  async #create(threadId: string, id: string): Promise<Thread> {
    const labels: Record<string, string> = { framework: FRAMEWORK, key: threadId };
    if (this.scope !== undefined) labels["scope"] = this.scope;
    try {
      await this.client.create({ id, labels });
    } catch (err) {
      if (!(err instanceof LogbookError && err.code === "SESSION_ALREADY_EXISTS")) throw err;
      const t = await this.#fold(threadId, id);
      if (t) return t;
    }
    const t = new Thread();
    this.#threads.set(id, t);
    return t;
  }

  // check refuses a session whose labels are not those of the saver's
  // thread threadId: another application's session with the same id.
  #check(threadId: string, labels: Record<string, string> | undefined): void {
    if (labels?.["framework"] === FRAMEWORK && labels["key"] === threadId && labels["scope"] === this.scope) return;
    throw new Error(
      `langgraph: session ${JSON.stringify(this.sessionId(threadId))} is not thread ${JSON.stringify(threadId)}'s${this.scope === undefined ? "" : ` in scope ${JSON.stringify(this.scope)}`}: its labels are ${JSON.stringify(labels ?? {})}`,
    );
  }

  // locked runs f after every earlier call for session id has settled.
  #locked<T>(id: string, f: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(id) ?? Promise.resolve();
    const run = prev.then(f, f);
    const done = run.catch(() => undefined);
    this.#locks.set(id, done);
    void done.then(() => {
      if (this.#locks.get(id) === done) this.#locks.delete(id);
    });
    return run;
  }
}

// checkThreadId refuses a thread id a label cannot hold, before anything is written.
function checkThreadId(threadId: unknown): asserts threadId is string {
  if (typeof threadId !== "string" || threadId === "") throw new Error(`langgraph: a thread_id must be a non-empty string, not ${JSON.stringify(threadId)}`);
  if (Buffer.byteLength(threadId, "utf8") > MAX_THREAD_ID_BYTES || /[\u0000-\u001f\u007f]/.test(threadId) || /\p{Surrogate}/u.test(threadId)) {
    throw new Error(`langgraph: a thread_id must be at most ${MAX_THREAD_ID_BYTES} bytes of UTF-8 without control characters or lone surrogates (it is kept in the session's labels)`);
  }
}

function latest(ids: Iterable<string>): string | undefined {
  let max: string | undefined;
  for (const id of ids) if (max === undefined || id > max) max = id;
  return max;
}

function typed([type, bytes]: [string, Uint8Array]): (string | Uint8Array)[] {
  return [type, bytes];
}

// operationId is "langgraph/<kind>/" and 40 hex digits of the SHA-256 of
// the parts, each with its length in front.
function operationId(kind: string, parts: (string | Uint8Array)[]): string {
  const h = createHash("sha256");
  for (const p of parts) {
    const b = typeof p === "string" ? Buffer.from(p, "utf8") : p;
    h.update(`${b.length}:`);
    h.update(b);
  }
  return `langgraph/${kind}/${h.digest("hex").slice(0, 40)}`;
}
