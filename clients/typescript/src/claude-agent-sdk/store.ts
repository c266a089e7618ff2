// A SessionStore of the Claude Agent SDK backed by logbook.

import { createHash } from "node:crypto";

import type { SessionKey, SessionStore, SessionStoreEntry, SessionSummaryEntry } from "@anthropic-ai/claude-agent-sdk";

import { sessionIdFor } from "../adapters/keys.js";
import { LogbookError, type Client, type Input, type Session, type SessionHeader } from "../index.js";
import { ENTRY_TYPE, newLoop, plan, type Entry, type Loop } from "./transcript.js";

/** The label "framework" of every session the store writes. */
export const FRAMEWORK = "claude-agent-sdk";

/** The longest label value logbook keeps, in UTF-8 bytes (docs/format.md). */
const MAX_LABEL_BYTES = 1024;

/** How many sessions' loop states a store keeps by default. */
const DEFAULT_CACHED_SESSIONS = 1000;

/** How many sessions listSessionSummaries reads at once. */
const SUMMARY_READERS = 8;

/** How often delete retries when another writer takes the session live between its release and its delete. */
const DELETE_ATTEMPTS = 5;

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
export function sessionIdOf(key: SessionKey): string {
  checkLabel("projectKey", key.projectKey);
  checkLabel("sessionId", key.sessionId);
  if (key.subpath !== undefined) {
    if (key.subpath === "") throw new RangeError("claude-agent-sdk: subpath is empty; omit it for the main transcript (SessionKey.subpath)");
    checkLabel("subpath", key.subpath);
  }
  const parts = [escapePart(key.projectKey), escapePart(key.sessionId)];
  if (key.subpath !== undefined) parts.push(key.subpath);
  return sessionIdFor(parts.join("/"));
}

function escapePart(s: string): string {
  return s.replace(/%/g, "%25").replace(/\//g, "%2F");
}

function checkLabel(name: string, v: string): void {
  if (typeof v !== "string") throw new RangeError(`claude-agent-sdk: ${name} must be a string`);
  if (Buffer.byteLength(v, "utf8") > MAX_LABEL_BYTES) {
    throw new RangeError(`claude-agent-sdk: ${name} is ${Buffer.byteLength(v, "utf8")} bytes; the session's labels keep at most ${MAX_LABEL_BYTES} (docs/format.md)`);
  }
  if (/[\u0000-\u001f\u007f]/.test(v)) throw new RangeError(`claude-agent-sdk: ${name} holds a control character, which a label value may not (docs/format.md)`);
}

// labelsOf returns the labels a session of key is created with.
function labelsOf(key: SessionKey): Record<string, string> {
  const labels: Record<string, string> = { framework: FRAMEWORK, project: key.projectKey, session: key.sessionId };
  if (key.subpath !== undefined) labels["subpath"] = key.subpath;
  return labels;
}

// operationId returns the operation id of group k of the line with uuid:
// the uuid when it is an id logbook takes (printable ASCII) and holds no
// "#" or ":", else "sha256:" and its hash; "#k" after it for k > 0.
function operationId(uuid: string, k: number): string {
  const base = /^[\x20-\x7e]{1,100}$/.test(uuid) && !/[#:]/.test(uuid) ? uuid : "sha256:" + createHash("sha256").update(uuid).digest("hex");
  return k === 0 ? base : `${base}#${k}`;
}

/** One request of an append: uuid-less lines, or group k of a line with a uuid. */
interface Request {
  inputs: Input<unknown>[];
  line?: { uuid: string; k: number; last: boolean; after: Loop };
}

/** One session of the listing the store reads its keys from. */
interface Listed {
  key: SessionKey;
  mtime: number;
}

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
export class LogbookSessionStore implements SessionStore {
  readonly client: Client;
  readonly #flush: boolean;
  readonly #maxCached: number;
  readonly #warn: (message: string) => void;
  // The loop state of each session appended to, least recently used first.
  readonly #loops = new Map<string, Loop>();
  // The tail of each session's queue of appends and deletes.
  readonly #queues = new Map<string, Promise<void>>();

  constructor(o: LogbookSessionStoreOptions) {
    this.client = o.client;
    this.#flush = o.flush ?? false;
    this.#maxCached = o.maxCachedSessions ?? DEFAULT_CACHED_SESSIONS;
    this.#warn = o.onWarning ?? ((m) => process.emitWarning(m, "LogbookSessionStore"));
  }

  /** append stores entries in order, each line with a uuid under it as the
   * operation id (a line stored already is skipped), the others as they
   * come; it creates the session on first use. */
  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const id = sessionIdOf(key);
    await this.#serial(id, async () => {
      try {
        await this.#appendEntries(key, id, entries as Entry[]);
      } catch (err) {
        // Deleted meanwhile (by another process): create it on the next append.
        if (err instanceof LogbookError && err.code === "SESSION_NOT_FOUND") this.#loops.delete(id);
        throw err;
      }
    });
  }

  // appendEntries stores entries in session id: the body of append. It
  // plans every request first, so that with flush only the last one
  // flushes (a flush makes all the session's events durable).
  async #appendEntries(key: SessionKey, id: string, entries: Entry[]): Promise<void> {
    const loop = await this.#loop(key, id);
    const state = { ...loop };
    const planned = new Set<string>();
    const reqs: Request[] = [];
    for (const entry of entries) {
      const uuid = typeof entry.uuid === "string" && entry.uuid !== "" ? entry.uuid : undefined;
      if (uuid === undefined) {
        const record = plan({ ...state }, entry)[0]!;
        const last = reqs[reqs.length - 1];
        if (last !== undefined && last.line === undefined) last.inputs.push(...record);
        else reqs.push({ inputs: record });
        continue;
      }
      if (loop.stored.has(uuid) || planned.has(uuid)) continue;
      planned.add(uuid);
      const groups = plan(state, entry);
      const after = { ...state };
      groups.forEach((inputs, k) => reqs.push({ inputs, line: { uuid, k, last: k === groups.length - 1, after } }));
    }
    const s = this.client.session(id);
    let flushed = false;
    let skip: string | undefined; // a line another writer stored: its other groups are not sent
    for (const [n, r] of reqs.entries()) {
      const flush = this.#flush && n === reqs.length - 1;
      if (r.line === undefined) {
        await s.append(r.inputs, { flush });
        flushed = flush;
        continue;
      }
      const { uuid, k, last, after } = r.line;
      flushed = false;
      if (skip !== uuid) {
        const mine = await this.#appendGroup(s, uuid, k, r.inputs, flush);
        flushed = flush && mine;
        if (!mine && k === 0) skip = uuid;
      }
      if (!last) continue;
      if (skip === uuid) this.#loops.delete(id); // read the state back on the next append
      else Object.assign(loop, after);
      loop.stored.add(uuid);
    }
    if (this.#flush && !flushed) {
      try {
        await s.flush();
      } catch (err) {
        if (!(err instanceof LogbookError) || err.code !== "SESSION_NOT_LIVE") throw err; // not live: durable already
      }
    }
  }

  // appendGroup appends group k of the line with uuid under its operation
  // id and reports whether it is this store's; false: another writer
  // stored the line first, with other typed events (OPERATION_CONFLICT).
  // Typed events logbook refuses are left out of group 0 and the line is
  // stored without them; another group is then dropped.
  async #appendGroup(s: Session, uuid: string, k: number, group: Input<unknown>[], flush: boolean): Promise<boolean> {
    try {
      await s.appendOnce(operationId(uuid, k), group, { flush });
      return true;
    } catch (err) {
      if (!(err instanceof LogbookError)) throw err;
      if (err.code === "OPERATION_CONFLICT") return false;
      if (err.status !== 422) throw err;
      this.#warn(`logbook session ${s.id}: the typed events of line ${uuid} were refused (${err.code}: ${err.detail}); the line is stored without them`);
      if (k > 0) return false;
      await s.appendOnce(operationId(uuid, 0), [group[0]!], { flush });
      return true;
    }
  }

  /** load returns the lines of key in the order stored, null when the key was never written. */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const id = sessionIdOf(key);
    try {
      const evs = await this.client.session(id).events();
      return evs.filter((e) => e.type === ENTRY_TYPE).map((e) => e.data as SessionStoreEntry);
    } catch (err) {
      if (err instanceof LogbookError && err.code === "SESSION_NOT_FOUND") return null;
      throw err;
    }
  }

  /** listSessions returns the main transcripts of projectKey, each with the
   * server's time of its last write (lastActivity) as mtime. */
  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    return (await this.#list()).filter((l) => l.key.projectKey === projectKey && l.key.subpath === undefined).map((l) => ({ sessionId: l.key.sessionId, mtime: l.mtime }));
  }

  /** listSessionSummaries returns the summary of each main transcript of
   * projectKey, folded by the SDK's foldSessionSummary from its stored
   * lines, with the mtime listSessions gives; nothing derived is stored, so
   * a summary never lags its log. */
  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const { foldSessionSummary } = await import("@anthropic-ai/claude-agent-sdk");
    const mains = (await this.#list()).filter((l) => l.key.projectKey === projectKey && l.key.subpath === undefined);
    const out: SessionSummaryEntry[] = [];
    let next = 0;
    const worker = async () => {
      while (next < mains.length) {
        const l = mains[next++]!;
        const entries = await this.load(l.key);
        if (entries !== null) out.push(foldSessionSummary(undefined, l.key, entries, { mtime: l.mtime }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(SUMMARY_READERS, mains.length) }, worker));
    return out;
  }

  /** delete deletes the session of key from every backend, and for a main
   * transcript its subagents' sessions too; a session under a legal hold
   * is not deleted (SESSION_HELD). */
  async delete(key: SessionKey): Promise<void> {
    if (key.subpath === undefined) {
      for (const subpath of await this.listSubkeys(key)) await this.#delete(sessionIdOf({ ...key, subpath }));
    }
    await this.#delete(sessionIdOf(key));
  }

  /** listSubkeys returns the subpaths stored under a main transcript. */
  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    return (await this.#list())
      .filter((l) => l.key.projectKey === key.projectKey && l.key.sessionId === key.sessionId && l.key.subpath !== undefined)
      .map((l) => l.key.subpath!);
  }

  // delete deletes session id after the appends queued before it.
  async #delete(id: string): Promise<void> {
    await this.#serial(id, async () => {
      this.#loops.delete(id);
      const s = this.client.session(id);
      // A live session is released first (delete refuses it, ALREADY_OWNED);
      // one another writer takes live again in between is released again.
      for (let attempt = 1; ; attempt++) {
        try {
          await s.release();
        } catch (err) {
          if (!(err instanceof LogbookError) || err.code !== "SESSION_NOT_LIVE") throw err;
        }
        try {
          await s.delete({ reason: "claude-agent-sdk SessionStore.delete" });
          return;
        } catch (err) {
          if (!(err instanceof LogbookError)) throw err;
          if (err.code === "SESSION_NOT_FOUND") return;
          if (err.code !== "ALREADY_OWNED" || attempt === DELETE_ATTEMPTS) throw err;
        }
      }
    });
  }

  // list returns the sessions this store wrote, from every page of the
  // listing: those whose labels name a key that maps to their id (a fork
  // or salvage child inherits its parent's labels under another id).
  async #list(): Promise<Listed[]> {
    const out: Listed[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
      for (const e of page.sessions) {
        const key = e.header ? keyOf(e.header) : undefined;
        if (!key) continue;
        const lastActivity = (e as { lastActivity?: number }).lastActivity;
        out.push({ key, mtime: Math.floor(lastActivity ?? e.header!.createdAt) });
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return out;
  }

  // loop returns the loop state of session id: the cached one, else folded
  // from the stored lines, else (no such session) a new session's, which
  // it creates.
  async #loop(key: SessionKey, id: string): Promise<Loop> {
    const cached = this.#loops.get(id);
    if (cached) {
      this.#loops.delete(id);
      this.#loops.set(id, cached);
      return cached;
    }
    const loop = await this.#read(key, id);
    this.#loops.set(id, loop);
    while (this.#loops.size > this.#maxCached) this.#loops.delete(this.#loops.keys().next().value!);
    return loop;
  }

  async #read(key: SessionKey, id: string): Promise<Loop> {
    const s = this.client.session(id);
    for (;;) {
      try {
        const info = await s.info();
        checkOwner(id, key, info.header);
        const loop = newLoop();
        for (const e of await s.events()) {
          if (e.type !== ENTRY_TYPE) continue;
          const entry = e.data as Entry;
          plan(loop, entry);
          if (typeof entry.uuid === "string" && entry.uuid !== "") loop.stored.add(entry.uuid);
        }
        return loop;
      } catch (err) {
        if (!(err instanceof LogbookError) || err.code !== "SESSION_NOT_FOUND") throw err;
      }
      try {
        await this.client.create({
          id,
          protocol: "lenient",
          labels: labelsOf(key),
          ...(key.subpath === undefined ? {} : { parentSession: sessionIdOf({ projectKey: key.projectKey, sessionId: key.sessionId }) }),
        });
        return newLoop();
      } catch (err) {
        // Another writer created it first: read it.
        if (!(err instanceof LogbookError) || err.code !== "SESSION_ALREADY_EXISTS") throw err;
      }
    }
  }

  // serial runs fn after every earlier append or delete of session id.
  #serial(id: string, fn: () => Promise<void>): Promise<void> {
    const run = (this.#queues.get(id) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => undefined);
    this.#queues.set(id, tail);
    void tail.then(() => {
      if (this.#queues.get(id) === tail) this.#queues.delete(id);
    });
    return run;
  }
}

// keyOf returns the SessionStore key a header's labels keep, undefined for
// a session this store did not write: other labels, or labels of a key
// whose id is not the session's (a fork or salvage child inherits them).
function keyOf(h: SessionHeader): SessionKey | undefined {
  const l = h.labels;
  if (!l || l["framework"] !== FRAMEWORK || l["project"] === undefined || l["session"] === undefined) return undefined;
  const key: SessionKey = l["subpath"] === undefined ? { projectKey: l["project"], sessionId: l["session"] } : { projectKey: l["project"], sessionId: l["session"], subpath: l["subpath"] };
  try {
    return sessionIdOf(key) === h.id ? key : undefined;
  } catch {
    return undefined; // labels no key of this store has
  }
}

// checkOwner refuses to write into a session that is not key's: another
// framework's, or another key's that maps to the same id.
function checkOwner(id: string, key: SessionKey, h: SessionHeader): void {
  const k = keyOf(h);
  if (!k || k.projectKey !== key.projectKey || k.sessionId !== key.sessionId || k.subpath !== key.subpath) {
    throw new Error(`claude-agent-sdk: logbook session ${JSON.stringify(id)} exists but its labels are not those of this key (${JSON.stringify(h.labels ?? {})}); it was not written by this store for this key`);
  }
}
