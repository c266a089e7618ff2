import { CONNECTION_FAILED, LogbookError, retryable, type Problem } from "./errors.js";
import { Event, type Input, type Message, type Seq } from "./events.js";
import { encodeJSON, type JSONValue } from "./json.js";
import { readEvents } from "./sse.js";

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
  torn?: { bytes: number; fromSeq: Seq };
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
  sessions: { id: string; live: boolean; header?: SessionHeader; revision?: string; error?: { code: string; detail: string } }[];
  /** The cursor of the next page; null after the last. */
  nextCursor: string | null;
}

/** The answer of a flush: every backend's durable seq. */
export interface FlushResult {
  participated: boolean;
  backends: { name: string; durableSeq: Seq }[];
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
  replace?: { startSeq: Seq; endSeq: Seq };
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
  perTurn: { turn?: number; startSeq: Seq; tokens: number }[];
  nodes: { seq: Seq; tokens: number }[];
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
  ancestors: { id: string; seq?: Seq; missing?: boolean }[];
  children: { id: string; seq?: Seq; createdAt: number }[];
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
  torn?: { bytes: number; fromSeq: Seq; artifact: string };
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
export class Client {
  readonly baseUrl: string;
  /** The tenant every call addresses (ClientOptions.tenant); undefined for the credential's own. */
  readonly tenant: string | undefined;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(o: ClientOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.#token = o.token;
    this.tenant = o.tenant;
    this.#fetch = o.fetch ?? globalThis.fetch;
  }

  /** whoami returns the credential the server sees: its name, tenant and role. */
  async whoami(): Promise<Whoami> {
    return (await (await this.call("GET", "/v1/whoami")).json()) as Whoami;
  }

  /** create makes a new session (id default: a generated one) with the header fields of o and returns it. */
  async create(o: CreateOptions = {}): Promise<Session> {
    const res = await this.call("POST", "/v1/sessions", { json: o });
    const header = (await res.json()) as SessionHeader;
    return new Session(this, header.id, header);
  }

  /** session returns the handle of session id, without a request. */
  session(id: string): Session {
    return new Session(this, id);
  }

  /** list returns one page of the sessions: by id, most recent first, or most recently active first. */
  async list(o: { limit?: number; cursor?: string; order?: "id" | "recent" | "activity" } = {}): Promise<SessionPage> {
    return (await (await this.call("GET", "/v1/sessions", { query: o })).json()) as SessionPage;
  }

  /** openapi returns the OpenAPI document of the server's /v1 API. */
  async openapi(): Promise<JSONValue> {
    return (await (await this.call("GET", "/v1/openapi.json")).json()) as JSONValue;
  }

  /** call sends one request and returns the successful response; a problem answer or no answer throws LogbookError. */
  async call(method: string, path: string, c: Call = {}): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(c.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { ...c.headers };
    if (this.#token !== undefined) headers["Authorization"] = `Bearer ${this.#token}`;
    if (this.tenant !== undefined) {
      if (path.startsWith("/v1/")) url.searchParams.set("tenant", this.tenant);
      else headers["Logbook-Tenant"] = this.tenant;
    }
    let body: string | undefined;
    if (c.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = encodeJSON(c.json);
    } else if (c.ndjson !== undefined) {
      headers["Content-Type"] = "application/x-ndjson";
      body = c.ndjson;
    } else if (method === "POST") {
      // A POST says its media type even without a body (flush, release):
      // the server refuses one that does not (UNSUPPORTED_MEDIA_TYPE), so
      // that no web page's form or no-cors fetch passes for a client.
      headers["Content-Type"] = "application/json";
    }
    let res: Response;
    try {
      res = await this.#fetch(url, { method, headers, body, signal: c.signal ?? null });
    } catch (err) {
      if (c.signal?.aborted) throw err;
      throw new LogbookError({ code: CONNECTION_FAILED, status: 0, detail: `${method} ${url.pathname}: ${String(err)}` }, err);
    }
    if (res.ok) return res;
    throw await problemOf(res);
  }
}

async function problemOf(res: Response): Promise<LogbookError> {
  const text = await res.text().catch(() => "");
  if ((res.headers.get("Content-Type") ?? "").startsWith("application/problem+json")) {
    try {
      return new LogbookError(JSON.parse(text) as Problem);
    } catch {
      // fall through: not the server's problem document
    }
  }
  return new LogbookError({ code: "UNEXPECTED_RESPONSE", status: res.status, detail: `HTTP ${res.status} without a problem document: ${text.slice(0, 200)}` });
}

/** encodeInput writes one append input as its NDJSON line. */
export function encodeInput(i: Input<unknown>): string {
  const line: Record<string, unknown> = { type: i.type, data: i.data };
  if (i.surfaceOp !== undefined) line["surfaceOp"] = i.surfaceOp;
  if (i.sourceEventSeqs !== undefined) line["sourceEventSeqs"] = i.sourceEventSeqs;
  if (i.ignorable) line["ignorable"] = true;
  return encodeJSON(line);
}

function parseNDJSON(text: string): Event[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => new Event(l));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
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
  readonly client: Client;
  readonly id: string;
  /** The stored header, when the handle came from create or fork. */
  readonly header: SessionHeader | undefined;

  constructor(client: Client, id: string, header?: SessionHeader) {
    this.client = client;
    this.id = id;
    this.header = header;
  }

  // call sends a request to the session's resource sub ("/events"). The
  // ids "." and ".." go in the query parameter id under the segment "-":
  // fetch parses URLs as the WHATWG URL standard says, which removes those
  // segments from a path, escaped or not.
  #call(method: string, sub = "", c: Call = {}): Promise<Response> {
    if (this.id !== "." && this.id !== "..") return this.client.call(method, `/v1/sessions/${encodeURIComponent(this.id)}${sub}`, c);
    return this.client.call(method, `/v1/sessions/-${sub}`, { ...c, query: { ...c.query, id: this.id } });
  }

  /** info returns the header, the log's length, and whether it is live. */
  async info(): Promise<SessionInfo> {
    return (await (await this.#call("GET")).json()) as SessionInfo;
  }

  /** append appends inputs in order and returns their stored events. The
   * first rejected input ends the request: the ones before it stay
   * appended, and the LogbookError says how many (appended, from firstSeq). */
  async append(inputs: Input<unknown>[], o: AppendOptions = {}): Promise<Event[]> {
    return this.#append("/events", inputs, o);
  }

  /** appendGroup appends inputs as one atomic group (docs/compaction.md):
   * every one with consecutive seqs, or none; a rejected input throws its
   * LogbookError (line, index), appended 0. With expectedSeq the first
   * input must get that seq. A group holds at most one surface or
   * projection event. */
  async appendGroup(inputs: Input<unknown>[], o: AppendOptions = {}): Promise<Event[]> {
    return this.#append("/events/group", inputs, o);
  }

  /** appendOnce appends inputs as one atomic group under operationId, so
   * that a retry of it, from any process and after any restart, never
   * appends twice: when the session already holds the id with the same
   * inputs, nothing is appended and the original events come back with
   * replayed true. Other inputs under a held id throw OPERATION_CONFLICT
   * (firstSeq names the original's first event). */
  async appendOnce(operationId: string, inputs: Input<unknown>[], o: Omit<AppendOptions, "operationId"> = {}): Promise<AppendOutcome> {
    return this.#send("/events/group", inputs, { ...o, operationId });
  }

  async #append(sub: string, inputs: Input<unknown>[], o: AppendOptions): Promise<Event[]> {
    return (await this.#send(sub, inputs, o)).events;
  }

  async #send(sub: string, inputs: Input<unknown>[], o: AppendOptions): Promise<AppendOutcome> {
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
  async appendRetry(expected: Seq, inputs: Input<unknown>[], o: RetryOptions = {}): Promise<Event[]> {
    const r = new Retrier(o);
    const out: Event[] = [];
    const fail = (err: unknown, last = 0): never => {
      if (!(err instanceof LogbookError)) throw err;
      throw new LogbookError({ ...err.problem, appended: out.length + last, firstSeq: expected }, err);
    };
    while (out.length < inputs.length || inputs.length === 0) {
      const at = expected + out.length;
      const rest = inputs.slice(out.length);
      try {
        const evs = await this.append(rest, { expectedSeq: at, flush: o.flush, signal: o.signal });
        return out.concat(evs);
      } catch (err) {
        if (err instanceof LogbookError && err.code === "SEQ_CONFLICT" && err.actual !== undefined && err.actual > at && rest.length > 0) {
          const mine = await this.#ownEvents(r, at, err.actual, rest).catch(fail);
          out.push(...mine);
          if (mine.length < rest.length && (mine.length === 0 || at + mine.length !== err.actual)) fail(err);
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
        } catch (err) {
          if (err instanceof LogbookError && err.code === "SESSION_NOT_LIVE") break; // read from storage: durable already
          if (!(await r.again(err))) fail(err);
        }
      }
    }
    return out;
  }

  // ownEvents reads [at, end) and returns its leading events that are the
  // inputs' own, stopping at the first that is not.
  async #ownEvents(r: Retrier, at: Seq, end: Seq, inputs: Input<unknown>[]): Promise<Event[]> {
    end = Math.min(end, at + inputs.length);
    for (;;) {
      let stored: Event[];
      try {
        stored = await this.events({ from: at, to: end, signal: r.signal });
      } catch (err) {
        if (await r.again(err)) continue;
        throw err;
      }
      const mine: Event[] = [];
      for (const ev of stored) {
        if (!sameEvent(ev, inputs[mine.length]!)) break;
        mine.push(ev);
      }
      return mine;
    }
  }

  /** events reads the log [from, to) (defaults: all of it). */
  async events(o: { from?: Seq; to?: Seq; signal?: AbortSignal | undefined } = {}): Promise<Event[]> {
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
  async *follow(o: FollowOptions = {}): AsyncGenerator<Event, void, undefined> {
    let next = o.from ?? 0;
    const base = o.backoffMs ?? 50;
    let wait = base;
    while (o.to === undefined || next < o.to) {
      if (o.signal?.aborted) return;
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
        const headers: Record<string, string> = { Accept: "text/event-stream" };
        if (next > 0) headers["Last-Event-ID"] = String(next - 1);
        const res = await this.#call("GET", "/events", { query: { from: next, to: o.to }, headers, signal: ac.signal });
        for await (const se of readEvents(res.body!, alive)) {
          const ev = new Event(se.data);
          if (ev.seq < next) continue;
          wait = base;
          next = ev.seq + 1;
          yield ev;
        }
        if (o.to !== undefined && next >= o.to) return;
        o.onReconnect?.(new Error("the event stream ended"));
      } catch (err) {
        if (o.signal?.aborted) return;
        if (err instanceof LogbookError && !retryable(err)) throw err;
        o.onReconnect?.(err);
      } finally {
        clearTimeout(timer);
        o.signal?.removeEventListener("abort", onAbort);
        ac.abort();
      }
      await sleep(wait, o.signal);
      wait = Math.min(2 * wait, o.maxBackoffMs ?? 1000);
    }
  }

  /** messages returns the derived messages, as right after event at
   * (default: now), in format (GET …/messages?format=; docs/providers.md):
   * logbook (the default) as derived, openai or anthropic the provider's
   * messages array, openai-responses the Responses API's input items,
   * markdown the text for a person. Every session renders, with or without
   * a request header; a provider format throws TOOL_CALLS_PENDING while a
   * step's calls have no result. */
  messages(o?: { at?: Seq; format?: "logbook" }): Promise<Message[]>;
  messages(o: { at?: Seq; format: "openai" | "anthropic" | "openai-responses" }): Promise<JSONValue[]>;
  messages(o: { at?: Seq; format: "markdown" }): Promise<string>;
  messages(o: { at?: Seq; format?: MessageFormat }): Promise<Message[] | JSONValue[] | string>;
  async messages(o: { at?: Seq; format?: MessageFormat } = {}): Promise<Message[] | JSONValue[] | string> {
    const body = await this.text("messages", o);
    return o.format === "markdown" ? body : (JSON.parse(body) as Message[] | JSONValue[]);
  }

  /** transcript returns the events that appended a message, as recorded. */
  async transcript(): Promise<TranscriptEntry[]> {
    return JSON.parse(await this.text("transcript")) as TranscriptEntry[];
  }

  /** surface returns the seqs of the surface nodes, in surface order. */
  async surface(o: { at?: Seq } = {}): Promise<Seq[]> {
    return JSON.parse(await this.text("surface", o)) as Seq[];
  }

  /** requestHeader returns the folded request header, null when the log has none. */
  async requestHeader(o: { at?: Seq } = {}): Promise<JSONValue> {
    return JSON.parse(await this.text("header", o)) as JSONValue;
  }

  /** request returns the request a model would be sent right after event
   * at (default: now), in format (GET …/request?format=): {header, context,
   * messages} (logbook, the default), or the provider's body (openai,
   * anthropic, openai-responses). A provider format throws
   * REQUEST_HEADER_MISSING when the log has no request/header up to that
   * event, and TOOL_CALLS_PENDING while a step's calls have no result. */
  request(o?: { at?: Seq; format?: "logbook" }): Promise<ModelRequest>;
  request(o: { at?: Seq; format: "openai" | "anthropic" | "openai-responses" }): Promise<JSONValue>;
  request(o: { at?: Seq; format?: RequestFormat }): Promise<ModelRequest | JSONValue>;
  async request(o: { at?: Seq; format?: RequestFormat } = {}): Promise<ModelRequest | JSONValue> {
    return JSON.parse(await this.text("request", o)) as ModelRequest | JSONValue;
  }

  /** why returns the provenance tree of event seq. */
  async why(seq: Seq): Promise<WhyNode> {
    return JSON.parse(await this.text("why", { seq })) as WhyNode;
  }

  /** shadowed returns the nodes replacements took off the surface, as after event at (default: now). */
  async shadowed(o: { at?: Seq } = {}): Promise<Shadowed> {
    return JSON.parse(await this.text("shadowed", o)) as Shadowed;
  }

  /** tokens returns the token estimate of the next request, as after event at (default: now). */
  async tokens(o: { at?: Seq } = {}): Promise<Tokens> {
    return JSON.parse(await this.text("tokens", o)) as Tokens;
  }

  /** lineage returns the session's fork family. */
  async lineage(): Promise<Lineage> {
    return JSON.parse(await this.text("lineage")) as Lineage;
  }

  /** inspect returns the open turn and the repair a resume would append. */
  async inspect(): Promise<Inspection> {
    return JSON.parse(await this.text("inspect")) as Inspection;
  }

  /** text returns a view's document exactly as the server sent it: the
   * canonical bytes, for comparing or for a lossless parser. */
  async text(view: View, o: ViewQuery = {}): Promise<string> {
    const res = await this.#call("GET", "/" + view, { query: { at: o.at, format: o.format, seq: o.seq } });
    return (await res.text()).replace(/\n$/, "");
  }

  /** open resumes the stored session for write (closing an interrupted
   * turn, cutting a torn tail) and keeps it live, or finds it live; an
   * append resumes a session by itself, so open is for reading the repair
   * before the first write. */
  async open(): Promise<Opened> {
    return (await (await this.#call("POST", "/open")).json()) as Opened;
  }

  /** fork makes a live child keeping the events up to at (default: all), with id as (default: generated). */
  async fork(o: { at?: Seq; as?: string } = {}): Promise<Session> {
    const res = await this.#call("POST", "/fork", { json: o });
    const header = (await res.json()) as SessionHeader;
    return new Session(this.client, header.id, header);
  }

  /** flush makes every appended event durable on every backend. */
  async flush(signal?: AbortSignal): Promise<FlushResult> {
    return (await (await this.#call("POST", "/flush", { signal })).json()) as FlushResult;
  }

  /** compact runs a manual compaction and returns the events it appended. */
  async compact(o: { startSeq?: Seq; endSeq?: Seq; sourceCommandId?: string } = {}): Promise<Event[]> {
    const res = await this.#call("POST", "/compact", { json: o });
    return parseNDJSON(await res.text());
  }

  /** release flushes the session and lets the server drop it. */
  async release(): Promise<void> {
    await this.#call("POST", "/release");
  }

  /** delete deletes the stored session from every backend, audited with
   * by "api" and the reason: a live session is ALREADY_OWNED (release it
   * first), a held one SESSION_HELD. */
  async delete(o: { reason?: string } = {}): Promise<void> {
    await this.#call("DELETE", "", { query: { reason: o.reason } });
  }

  /** hold puts a legal hold on the stored session: delete and retention refuse it until releaseHold. */
  async hold(o: { reason?: string } = {}): Promise<HoldResult> {
    return (await (await this.#call("POST", "/hold", { json: o })).json()) as HoldResult;
  }

  /** releaseHold lifts the legal hold. */
  async releaseHold(o: { reason?: string } = {}): Promise<HoldResult> {
    return (await (await this.#call("POST", "/release-hold", { json: o })).json()) as HoldResult;
  }
}

/** The backoff and attempt count of one appendRetry. */
class Retrier {
  readonly signal: AbortSignal | undefined;
  #o: RetryOptions;
  #attempts = 0;
  #wait: number;

  constructor(o: RetryOptions) {
    this.#o = o;
    this.signal = o.signal;
    this.#wait = o.backoffMs ?? 10;
  }

  // again waits out the backoff and returns true when err may pass on a
  // retry and attempts remain.
  async again(err: unknown): Promise<boolean> {
    this.#attempts++;
    if (!retryable(err) || this.signal?.aborted) return false;
    if (this.#o.maxAttempts !== undefined && this.#attempts >= this.#o.maxAttempts) return false;
    this.#o.onRetry?.(err as LogbookError);
    await sleep(this.#wait, this.signal);
    this.#wait = Math.min(2 * this.#wait, this.#o.maxBackoffMs ?? 1000);
    return !this.signal?.aborted;
  }
}

/** sameEvent reports whether a stored event is the one input would append. */
export function sameEvent(ev: Event, input: Input<unknown>): boolean {
  if (ev.type !== input.type || ev.ignorable !== (input.ignorable === true)) return false;
  if (!sameSurfaceOp(ev.surfaceOp, input.surfaceOp)) return false;
  if ((ev.sourceEventSeqs === undefined) !== (input.sourceEventSeqs === undefined)) return false;
  if (ev.sourceEventSeqs && ev.sourceEventSeqs.join(",") !== input.sourceEventSeqs!.join(",")) return false;
  const stored = ev.dataText;
  const mine = encodeJSON(input.data);
  // The stored data is canonical; a builder's is too, so the texts match.
  // Other JSON (spacing, \u escapes) is compared by value.
  return stored === mine || deepEqual(JSON.parse(stored), JSON.parse(mine));
}

function sameSurfaceOp(a: Input["surfaceOp"], b: Input["surfaceOp"]): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a === "append" || b === "append") return a === b;
  return a.startSeq === b.startSeq && a.endSeq === b.endSeq;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
