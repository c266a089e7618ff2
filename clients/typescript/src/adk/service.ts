// LogbookSessionService: a Google ADK session service whose sessions are
// logbook sessions.

import { createHash, randomUUID } from "node:crypto";
import {
  BaseSessionService,
  createSession,
  isFinalResponse,
  State,
  type AppendEventRequest,
  type CreateSessionRequest,
  type DeleteSessionRequest,
  type Event as AdkEvent,
  type GetSessionRequest,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type Session as AdkSession,
} from "@google/adk";
import { sessionIdFor } from "../adapters/keys.js";
import type { Client, Session, SessionHeader } from "../client.js";
import { LogbookError, retryable } from "../errors.js";
import type { Event, Input } from "../events.js";
import { encodeJSON, RawJSON, type JSONValue } from "../json.js";
import { pack, sign, signed, unpack, type Notes } from "./codec.js";
import { isLoopType, Loop, plan } from "./project.js";

/** The type of the log-only record that keeps one ADK event, losslessly. */
export const EVENT_TYPE = "adk/event";
/** The type of the log-only record that keeps a state delta. */
export const STATE_TYPE = "adk/state";
/** The value of the "framework" label of every session this adapter makes. */
export const FRAMEWORK = "adk";

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

// The longest label value logbook takes, in bytes (see CreateOptions.labels).
const MAX_LABEL_VALUE_BYTES = 1024;

function checkName(what: string, v: string): void {
  if (typeof v !== "string") throw new TypeError(`adk: ${what} must be a string`);
  if (Buffer.byteLength(v, "utf8") > MAX_LABEL_VALUE_BYTES || /[\u0000-\u001f\u007f]/.test(v)) {
    throw new TypeError(`adk: ${what} must be at most ${MAX_LABEL_VALUE_BYTES} bytes without control characters (it is kept as a session label)`);
  }
}

// enc escapes "%" and "/" in one part of a key, so that the parts joined by
// "/" name one (app, user, session) only.
function enc(s: string): string {
  return s.replaceAll("%", "%25").replaceAll("/", "%2F");
}

/**
 * keyOf returns the framework key of a logbook session the adapter keeps:
 * "<app>/<user>/<session>" for an ADK session, "<app>/%app" for the app's
 * state and "<app>/<user>/%user" for a user's state, each part with "%" and
 * "/" escaped as %25 and %2F (so no two keys meet). sessionIdFor maps it to
 * the session id.
 */
export function keyOf(kind: Kind, app: string, user = "", session = ""): string {
  switch (kind) {
    case "session":
      return `${enc(app)}/${enc(user)}/${enc(session)}`;
    case "app":
      return `${enc(app)}/%app`;
    case "user":
      return `${enc(app)}/${enc(user)}/%user`;
  }
}

function labelsOf(kind: Kind, app: string, user: string, session: string): Record<string, string> {
  const l: Record<string, string> = { framework: FRAMEWORK, "adk.kind": kind, "adk.app": app };
  if (kind !== "app") l["adk.user"] = user;
  if (kind === "session") l["adk.session"] = session;
  l["key"] = keyOf(kind, app, user, session);
  return l;
}

function ours(h: SessionHeader | undefined, want: Record<string, string>): boolean {
  const l = h?.labels;
  return l !== undefined && Object.entries(want).every(([k, v]) => l[k] === v);
}

function isCode(err: unknown, ...codes: string[]): err is LogbookError {
  return err instanceof LogbookError && codes.includes(err.code);
}

function sha(s: string): string {
  return createHash("sha256").update(s).digest("hex");
}

// The operation id of an ADK event: its id when that is 1–100 bytes of
// printable ASCII without "~" (which names the upserts of an event), else
// "adk-" and 40 hex of its SHA-256.
function operationOf(eventId: string): string {
  return /^[\x20-\x7e]{1,100}$/.test(eventId) && !eventId.includes("~") ? eventId : "adk-" + sha(eventId).slice(0, 40);
}

// encodeRecord writes the data of a record: v packed as member (see
// pack), its notes, then the members of more.
function encodeRecord(member: string, v: unknown, more: Record<string, JSONValue>): string {
  const p = pack(v, member);
  const d: Record<string, JSONValue> = { [member]: p.json };
  if (p.undefined) d["undefined"] = p.undefined;
  if (p.nullPrototype) d["nullPrototype"] = p.nullPrototype;
  return encodeJSON({ ...d, ...more });
}

// decodeRecord reads back the value encodeRecord packed as member.
function decodeRecord(text: string, member: string): unknown {
  const d = JSON.parse(text) as Notes & Record<string, unknown>;
  return unpack(d[member], d);
}

function encodeEvent(e: AdkEvent): string {
  return encodeRecord("event", e, signed(e) ? { signed: true } : {});
}

function decodeEvent(text: string): AdkEvent {
  const e = decodeRecord(text, "event") as AdkEvent;
  if ((JSON.parse(text) as { signed?: true }).signed) sign(e);
  return e;
}

function encodeState(delta: Record<string, unknown>, source: Record<string, string>): string {
  return encodeRecord("delta", delta, { source });
}

// copy returns a deep copy of v that keeps undefined members and null prototypes.
function copy<T>(v: T): T {
  const p = pack(v, "state");
  return unpack(JSON.parse(encodeJSON(p.json)), p) as T;
}

function sameData(stored: string, mine: string): boolean {
  if (stored === mine) return true;
  return encodeJSON(JSON.parse(stored)) === encodeJSON(JSON.parse(mine));
}

// record is the log-only input of type with the data text.
function record(type: string, text: string): Input<unknown> {
  return { type, data: new RawJSON(text), ignorable: true };
}

/**
 * Log is what the adapter knows of one logbook session: the events up to
 * next, folded into the loop state, the ADK events (an upsert replacing the
 * earlier event of its id in place) and the state. refresh reads what
 * others appended since; the calls on one Log run one at a time.
 */
class Log {
  readonly session: Session;
  header: SessionHeader | undefined;
  next = 0;
  #last = "";
  lastTime = 0;
  loop = new Loop();
  /** The data texts of the adk/event records, one per ADK event id, in order. */
  records: string[] = [];
  #index = new Map<string, number>();
  state: Record<string, unknown> = {};
  #queue: Promise<unknown> = Promise.resolve();

  constructor(session: Session, header?: SessionHeader) {
    this.session = session;
    this.header = header;
  }

  /** lock runs fn after the calls before it on this log. */
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #reset(): void {
    this.next = 0;
    this.#last = "";
    this.lastTime = 0;
    this.loop = new Loop();
    this.records = [];
    this.#index.clear();
    this.state = {};
  }

  /** refresh reads the header (once) and the events appended since the last read; SESSION_NOT_FOUND when the session is gone. */
  async refresh(): Promise<void> {
    if (this.header === undefined) this.header = (await this.session.info()).header;
    let evs: Event[];
    if (this.next === 0) evs = await this.session.events();
    else {
      evs = await this.session.events({ from: this.next - 1 });
      if (evs[0]?.envelope !== this.#last) {
        // Not the log this was read from (deleted and made again): read it anew.
        this.#reset();
        this.header = (await this.session.info()).header;
        evs = await this.session.events();
      } else evs = evs.slice(1);
    }
    for (const e of evs) this.add(e);
  }

  /** take adds the events an append answered, reading the log when they do not follow what is known. */
  async take(evs: Event[]): Promise<void> {
    for (const e of evs) {
      if (e.seq > this.next) return this.refresh();
      if (e.seq === this.next) this.add(e);
    }
  }

  /** add folds the next event of the log. */
  add(e: Event): void {
    this.next = e.seq + 1;
    this.#last = e.envelope;
    this.lastTime = e.time;
    if (isLoopType(e.type)) this.loop.fold(e.type, e.data);
    if (e.type === STATE_TYPE) Object.assign(this.state, decodeRecord(e.dataText, "delta"));
    if (e.type !== EVENT_TYPE) return;
    const text = e.dataText;
    const ae = decodeEvent(text);
    const i = this.#index.get(ae.id);
    if (i === undefined) {
      this.#index.set(ae.id, this.records.length);
      this.records.push(text);
    } else this.records[i] = text;
    foldDelta(this.state, ae.actions?.stateDelta);
  }

  /** record returns the data text of the stored ADK event of id, if any. */
  record(id: string): string | undefined {
    const i = this.#index.get(id);
    return i === undefined ? undefined : this.records[i];
  }
}

// foldDelta applies the session-scoped keys of an ADK state delta, as ADK
// does: app: and user: keys live in their own logs, temp: keys nowhere.
function foldDelta(state: Record<string, unknown>, delta: Record<string, unknown> | undefined): void {
  for (const [k, v] of Object.entries(delta ?? {})) {
    if (k.startsWith(State.APP_PREFIX) || k.startsWith(State.USER_PREFIX) || k.startsWith(State.TEMP_PREFIX)) continue;
    Object.defineProperty(state, k, { value: v, writable: true, enumerable: true, configurable: true });
  }
}

// scoped returns the app: and user: keys of a state (or delta), without temp:.
function scoped(s: Record<string, unknown> | undefined): { app: Record<string, unknown>; user: Record<string, unknown>; session: Record<string, unknown> } {
  const out = { app: {} as Record<string, unknown>, user: {} as Record<string, unknown>, session: {} as Record<string, unknown> };
  for (const [k, v] of Object.entries(s ?? {})) {
    if (k.startsWith(State.TEMP_PREFIX)) continue;
    const to = k.startsWith(State.APP_PREFIX) ? out.app : k.startsWith(State.USER_PREFIX) ? out.user : out.session;
    Object.defineProperty(to, k, { value: v, writable: true, enumerable: true, configurable: true });
  }
  return out;
}

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
export class LogbookSessionService extends BaseSessionService {
  readonly #client: Client;
  readonly #flush: boolean;
  readonly #attempts: number;
  readonly #logs = new Map<string, Log>();

  /** The service stores its sessions on the server of o.client. */
  constructor(o: LogbookSessionServiceOptions) {
    super();
    this.#client = o.client;
    this.#flush = o.flush === true;
    this.#attempts = o.maxAttempts ?? 8;
  }

  #log(kind: Kind, app: string, user = "", session = ""): Log {
    const id = sessionIdFor(keyOf(kind, app, user, session));
    let log = this.#logs.get(id);
    if (!log) {
      log = new Log(this.#client.session(id));
      this.#logs.set(id, log);
    }
    return log;
  }

  /** createSession makes a new ADK session (id default: a random UUID) with
   * the initial state: its app: and user: keys go to the app's and the
   * user's state, temp: keys nowhere. A session that exists already is an
   * error, and nothing changes. */
  async createSession({ appName, userId, state, sessionId }: CreateSessionRequest): Promise<AdkSession> {
    const id = sessionId || randomUUID();
    checkName("appName", appName);
    checkName("userId", userId);
    checkName("sessionId", id);
    const parts = scoped(state);
    const packed = encodeState(parts.session, { session: id });
    const lbId = sessionIdFor(keyOf("session", appName, userId, id));
    let s: Session;
    try {
      s = await this.#client.create({ id: lbId, labels: labelsOf("session", appName, userId, id) });
    } catch (err) {
      if (isCode(err, "SESSION_ALREADY_EXISTS")) throw new Error(`adk: session ${JSON.stringify(id)} of app ${JSON.stringify(appName)} and user ${JSON.stringify(userId)} already exists (logbook session ${lbId})`, { cause: err });
      throw err;
    }
    const log = new Log(s, s.header);
    this.#logs.set(lbId, log);
    const op = "adk-create-" + sha(`${lbId}\n${s.header!.createdAt}`).slice(0, 40);
    await log.lock(async () => {
      if (Object.keys(parts.session).length > 0) await this.#append(log, op, [record(STATE_TYPE, packed)]);
    });
    await this.#putScoped(appName, userId, op, parts, { session: id });
    return (await this.getSession({ appName, userId, sessionId: id }))!;
  }

  /** getSession returns the session with its events (the numRecentEvents
   * latest, those from afterTimestamp on, as ADK's in-memory service
   * selects them) and its state (app, user and session scope merged), or
   * undefined when there is none. */
  async getSession({ appName, userId, sessionId, config }: GetSessionRequest): Promise<AdkSession | undefined> {
    const log = this.#log("session", appName, userId, sessionId);
    const found = await log.lock(async () => {
      try {
        await log.refresh();
      } catch (err) {
        if (isCode(err, "SESSION_NOT_FOUND")) {
          this.#logs.delete(log.session.id);
          return undefined;
        }
        throw err;
      }
      if (!ours(log.header, labelsOf("session", appName, userId, sessionId))) return undefined;
      return { records: log.records.slice(), state: copy(log.state), time: log.lastTime || log.header!.createdAt };
    });
    if (!found) return undefined;
    let events = found.records.map(decodeEvent);
    if (config?.numRecentEvents) events = events.slice(-config.numRecentEvents);
    if (config?.afterTimestamp) {
      let i = events.length - 1;
      while (i >= 0 && events[i]!.timestamp >= config.afterTimestamp) i--;
      if (i >= 0) events = events.slice(i + 1);
    }
    const [app, user] = await Promise.all([this.#scopeState("app", appName), this.#scopeState("user", appName, userId)]);
    return createSession({ id: sessionId, appName, userId, state: { ...found.state, ...app, ...user }, events, lastUpdateTime: found.time });
  }

  // scopeState returns a copy of the app's or the user's state.
  async #scopeState(kind: "app" | "user", app: string, user = ""): Promise<Record<string, unknown>> {
    const log = this.#log(kind, app, user);
    return log.lock(async () => {
      try {
        await log.refresh();
      } catch (err) {
        if (isCode(err, "SESSION_NOT_FOUND")) return {};
        throw err;
      }
      return ours(log.header, labelsOf(kind, app, user, "")) ? copy(log.state) : {};
    });
  }

  /** listSessions lists the sessions of an app (of one user, or of all),
   * without events or state, paged and ordered as ADK's in-memory service
   * does; lastUpdateTime is the logbook time of the session's last event. */
  async listSessions({ appName, userId, limit, offset, page, order }: ListSessionsRequest): Promise<ListSessionsResponse> {
    const want: Record<string, string> = { framework: FRAMEWORK, "adk.kind": "session", "adk.app": appName };
    if (userId !== undefined) want["adk.user"] = userId;
    const all: AdkSession[] = [];
    let cursor: string | undefined;
    do {
      const p = await this.#client.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const s of p.sessions as (typeof p.sessions[number] & { lastActivity?: number })[]) {
        if (!ours(s.header, want)) continue;
        const l = s.header!.labels!;
        all.push(createSession({ id: l["adk.session"]!, appName, userId: l["adk.user"]!, state: {}, events: [], lastUpdateTime: s.lastActivity ?? s.header!.createdAt }));
      }
      cursor = p.nextCursor ?? undefined;
    } while (cursor);
    if (order === "asc") all.sort((a, b) => a.lastUpdateTime - b.lastUpdateTime || a.id.localeCompare(b.id));
    else if (order === "desc") all.sort((a, b) => b.lastUpdateTime - a.lastUpdateTime || a.id.localeCompare(b.id));
    const total = all.length;
    if (limit === undefined) {
      return { sessions: offset ? all.slice(offset) : all, page: 1, limit: total, totalItems: total, totalPages: total === 0 ? 0 : 1 };
    }
    const from = page !== undefined ? (page - 1) * limit : offset ?? 0;
    const current = page !== undefined ? page : limit === 0 ? 1 : Math.floor(from / limit) + 1;
    return { sessions: all.slice(from, from + limit), page: current, limit, totalItems: total, totalPages: limit === 0 ? 0 : Math.ceil(total / limit) };
  }

  /** deleteSession deletes the session's log (release, then delete; a
   * legal hold refuses it with SESSION_HELD). The app's and the user's
   * state stay. A session that does not exist is not an error. */
  async deleteSession({ appName, userId, sessionId }: DeleteSessionRequest): Promise<void> {
    const log = this.#log("session", appName, userId, sessionId);
    await log.lock(async () => {
      let header: SessionHeader;
      try {
        header = (await log.session.info()).header;
      } catch (err) {
        if (isCode(err, "SESSION_NOT_FOUND")) return;
        throw err;
      }
      if (!ours(header, labelsOf("session", appName, userId, sessionId))) return;
      for (let attempt = 1; ; attempt++) {
        try {
          await log.session.release().catch((err: unknown) => {
            if (!isCode(err, "SESSION_NOT_LIVE")) throw err;
          });
          await log.session.delete({ reason: "adk deleteSession" });
          break;
        } catch (err) {
          if (isCode(err, "SESSION_NOT_FOUND")) break;
          if (!(isCode(err, "ALREADY_OWNED") || retryable(err)) || attempt >= this.#attempts) throw err;
        }
      }
    });
    this.#logs.delete(log.session.id);
  }

  /** appendEvent stores an event (a partial event is not stored) under
   * its id as operation id, then folds it into session as ADK does (its
   * state delta, its place in session.events). An event logbook cannot
   * hold (NaN, a cycle, …) is a TypeError naming the place; then, as when
   * the server refuses it, nothing is stored and session is unchanged. */
  async appendEvent({ session, event }: AppendEventRequest): Promise<AdkEvent> {
    if (event.partial) return event;
    // ADK's own append, on a scratch session, trims the temp: keys off the
    // event exactly as ADK stores it.
    await super.appendEvent({ session: createSession({ id: session.id, appName: session.appName, userId: session.userId }), event });
    const text = encodeEvent(event);
    const log = this.#log("session", session.appName, session.userId, session.id);
    await log.lock(async () => {
      if (log.header === undefined) await log.refresh();
      if (!ours(log.header, labelsOf("session", session.appName, session.userId, session.id))) {
        throw new Error(`adk: logbook session ${log.session.id} is not the ADK session ${JSON.stringify(session.id)} of app ${JSON.stringify(session.appName)} and user ${JSON.stringify(session.userId)}`);
      }
      await this.#store(log, event, text);
    });
    const parts = scoped(event.actions?.stateDelta);
    await this.#putScoped(session.appName, session.userId, "adk-" + sha(`${log.session.id}\n${event.id}\n${text}`).slice(0, 40), parts, { session: session.id, event: event.id });
    await super.appendEvent({ session, event });
    session.lastUpdateTime = log.lastTime;
    return event;
  }

  // store appends the typed events and the record of event, unless the log
  // holds it already.
  async #store(log: Log, event: AdkEvent, text: string): Promise<void> {
    const op = operationOf(event.id);
    const rec = record(EVENT_TYPE, text);
    for (let attempt = 1; ; attempt++) {
      const prior = log.record(event.id);
      if (prior !== undefined && sameData(prior, text)) return;
      // A new event: its typed events and its record; the same id with
      // other content (ADK's upsert): the record alone, under an id of its own.
      const inputs = prior !== undefined ? [rec] : [...plan(log.loop.clone(), event, isFinalResponse(event)), rec];
      const id = prior !== undefined ? `${op}~${sha(text).slice(0, 16)}` : op;
      try {
        const out = await log.session.appendOnce(id, inputs, { expectedSeq: log.next, flush: this.#flush });
        await log.take(out.events);
        return;
      } catch (err) {
        if (attempt >= this.#attempts) throw err;
        if (isCode(err, "SEQ_CONFLICT", "OPERATION_CONFLICT")) await log.refresh();
        else if (!retryable(err)) throw err;
        else await new Promise((r) => setTimeout(r, Math.min(10 * 2 ** attempt, 1000)));
      }
    }
  }

  // append appends inputs once under op (no loop events, so no expected seq).
  async #append(log: Log, op: string, inputs: Input<unknown>[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await log.session.appendOnce(op, inputs, { flush: this.#flush });
        await log.take(out.events);
        return;
      } catch (err) {
        if (!retryable(err) || attempt >= this.#attempts) throw err;
        await new Promise((r) => setTimeout(r, Math.min(10 * 2 ** attempt, 1000)));
      }
    }
  }

  // putScoped appends the app: and user: keys of a delta to the app's and
  // the user's state logs, under operation ids made from op (a retry
  // appends nothing), making the logs on first use.
  async #putScoped(app: string, user: string, op: string, parts: ReturnType<typeof scoped>, source: Record<string, string>): Promise<void> {
    const puts: Promise<void>[] = [];
    for (const kind of ["app", "user"] as const) {
      const delta = parts[kind];
      if (Object.keys(delta).length === 0) continue;
      const log = this.#log(kind, app, user);
      const text = encodeState(delta, source);
      puts.push(
        log.lock(async () => {
          if (log.header === undefined) {
            try {
              log.header = (await this.#client.create({ id: log.session.id, labels: labelsOf(kind, app, user, "") })).header;
            } catch (err) {
              if (!isCode(err, "SESSION_ALREADY_EXISTS")) throw err;
              await log.refresh();
            }
          }
          if (!ours(log.header, labelsOf(kind, app, user, ""))) {
            throw new Error(`adk: logbook session ${log.session.id} is not the ${kind} state of app ${JSON.stringify(app)}${kind === "user" ? ` and user ${JSON.stringify(user)}` : ""}`);
          }
          await this.#append(log, op, [record(STATE_TYPE, text)]);
        }),
      );
    }
    await Promise.all(puts);
  }
}
