// The viewer's client of the /v1 API on its own origin. Every call carries
// the bearer token the page asked for (kept in sessionStorage), so the same
// page works on a loopback server without a token and on one with, and the
// tenant an operator picked (?tenant=, also kept in sessionStorage).

/** One stored event: the canonical envelope (docs/format.md). */
export interface Envelope {
  seq: number;
  time: number;
  type: string;
  data: any;
  surfaceOp?: "append" | { op?: string; replace?: boolean; startSeq: number; endSeq: number };
  sourceEventSeqs?: number[];
  ignorable?: true;
}

/** A session of GET /v1/sessions. */
export interface Listed {
  id: string;
  live: boolean;
  header?: SessionHeader;
  revision?: string;
  lastActivity?: number;
  eventCount?: number;
  parent?: { id: string; seq?: number };
  error?: { code: string; detail: string };
}

/** The stored session header. */
export interface SessionHeader {
  id: string;
  createdAt: number;
  isSeeded?: boolean;
  parentSession?: string;
  inheritedEventCount?: number;
  cwd?: string;
  [k: string]: unknown;
}

/** GET /v1/sessions/{id}. */
export interface SessionInfo {
  id: string;
  header: SessionHeader;
  length: number;
  live: boolean;
  torn?: { bytes: number; fromSeq: number };
  warning?: string;
}

/** An RFC 9457 problem the API answered, with logbook's error code. */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

const tokenKey = "logbook.token";

/** The bearer token of this tab, "" when none was given. */
export function token(): string {
  return sessionStorage.getItem(tokenKey) ?? "";
}

/** Keeps the bearer token for this tab; the tenant picked with the previous one is dropped. */
export function setToken(t: string): void {
  sessionStorage.setItem(tokenKey, t.trim());
  sessionStorage.removeItem(tenantKey);
}

const tenantKey = "logbook.tenant";

/** The names a tenant may have (TENANT_INVALID otherwise). */
export const tenantPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The tenant an operator picked for this tab, "" for the credential's own. */
export function tenant(): string {
  return sessionStorage.getItem(tenantKey) ?? "";
}

/** Picks the tenant every /v1 call of this tab names (?tenant=); "" for the credential's own. */
export function setTenant(t: string): void {
  if (t) sessionStorage.setItem(tenantKey, t);
  else sessionStorage.removeItem(tenantKey);
}

/** url (relative to the page) with the picked tenant's ?tenant= added. */
export function scoped(url: string): string {
  const t = tenant();
  if (!t) return url;
  return `${url}${url.includes("?") ? "&" : "?"}tenant=${encodeURIComponent(t)}`;
}

/** Called when the server refuses the token (401); set by the app. */
export let onUnauthorized: () => void = () => {};

/** Sets what happens when the server wants a token. */
export function setUnauthorizedHandler(f: () => void): void {
  onUnauthorized = f;
}

function headers(accept: string): HeadersInit {
  const h: Record<string, string> = { Accept: accept };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function problem(r: Response): Promise<Problem> {
  let code = `HTTP_${r.status}`;
  let detail = r.statusText;
  try {
    const p = await r.json();
    code = p.code ?? code;
    detail = p.detail ?? p.title ?? detail;
  } catch {
    // not a problem document
  }
  if (r.status === 401) onUnauthorized();
  return new Problem(r.status, code, detail);
}

/** GETs a /v1 path and decodes its JSON answer. */
export async function getJSON<T>(path: string, signal?: AbortSignal): Promise<T> {
  const r = await fetch(scoped(path), { headers: headers("application/json"), signal });
  if (!r.ok) throw await problem(r);
  return (await r.json()) as T;
}

/**
 * Sends a write (POST with a JSON body, or DELETE) to a /v1 path and
 * decodes its JSON answer (undefined for an empty one).
 */
export async function send<T>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<T | undefined> {
  const h = headers("application/json") as Record<string, string>;
  if (method === "POST") h["Content-Type"] = "application/json";
  const r = await fetch(scoped(path), { method, headers: h, body: method === "POST" ? JSON.stringify(body ?? {}) : undefined });
  if (!r.ok) throw await problem(r);
  const text = await r.text();
  return text ? (JSON.parse(text) as T) : undefined;
}

/**
 * A window of events as the server sent them: one canonical envelope per
 * line, seqs from, from+1, … (the window is contiguous), parsed only when
 * read, so a page costs the page little until its rows are drawn.
 */
export interface EventPage {
  from: number;
  lines: string[];
  /** Logbook-Next-Seq (the log's length) when the server sends it. */
  nextSeq?: number;
}

/** Reads the events [from, to) of a session as NDJSON lines. */
export async function events(id: string, from: number, to: number, signal?: AbortSignal): Promise<EventPage> {
  const r = await fetch(scoped(sessionURL(id, "/events", { from, to })), {
    headers: headers("application/x-ndjson"),
    signal,
  });
  if (!r.ok) throw await problem(r);
  const lines = (await r.text()).split("\n");
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const next = r.headers.get("Logbook-Next-Seq");
  return { from, lines, nextSeq: next === null ? undefined : Number(next) };
}

/**
 * Follows a session's events from seq from over Server-Sent Events, read
 * through fetch's streaming body (EventSource cannot send the token).
 * onEvent gets each envelope; the returned promise settles when the stream
 * ends or signal aborts. It reconnects after a dropped stream, resuming
 * after the last seq it saw (Last-Event-ID).
 */
export async function follow(id: string, from: number, onEvent: (e: Envelope) => void, signal: AbortSignal): Promise<void> {
  let last = from - 1;
  while (!signal.aborted) {
    try {
      const h = headers("text/event-stream") as Record<string, string>;
      if (last >= 0) h["Last-Event-ID"] = String(last);
      const r = await fetch(scoped(sessionURL(id, "/events", { from })), { headers: h, signal });
      if (!r.ok || !r.body) throw await problem(r);
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let cut: number;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("data:")) data += line.slice(line.startsWith("data: ") ? 6 : 5);
          }
          if (data) {
            const e = JSON.parse(data) as Envelope;
            last = e.seq;
            onEvent(e);
          }
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof Problem && err.status < 500) throw err;
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

/** A dot segment: one the browser removes from a path, escaped or not. */
function dots(id: string): boolean {
  return id === "." || id === "..";
}

/**
 * The URL of a session's resource, or of its sub-resource sub ("/events"),
 * with the query parameters query. The id is escaped as a path segment,
 * except "." and "..": the browser would remove them from the path (as
 * %2E and %2E%2E too), so they go in the query parameter id under the
 * segment "-", which the server reads so.
 */
export function sessionURL(id: string, sub = "", query: Record<string, string | number> = {}): string {
  const q = new URLSearchParams();
  if (dots(id)) q.set("id", id);
  for (const [k, v] of Object.entries(query)) q.set(k, String(v));
  const s = q.toString();
  return `v1/sessions/${dots(id) ? "-" : encodeURIComponent(id)}${sub}${s ? `?${s}` : ""}`;
}

/** The viewer's route of a session, at seq when given (#/sessions/ID?seq=N). */
export function sessionHash(id: string, seq?: number): string {
  const seg = dots(id) ? id.replaceAll(".", "%2E") : encodeURIComponent(id);
  return `#/sessions/${seg}${seq !== undefined ? `?seq=${seq}` : ""}`;
}

/** The optional routes this server turned out not to have, asked once per page load. */
const missing = new Set<string>();

/**
 * Calls an optional route (one a server may lack: /why, /lineage, /tokens,
 * /shadowed, a request format): undefined when the server has no such
 * route or feature, remembered under name so the page asks only once.
 */
export async function optional<T>(name: string, call: () => Promise<T>): Promise<T | undefined> {
  if (missing.has(name)) return undefined;
  try {
    return await call();
  } catch (err) {
    if (!unsupported(err)) throw err;
    missing.add(name);
    return undefined;
  }
}

/**
 * Whether an error means the server has no such route or feature (an older
 * server, or one whose helper routes have not landed): the viewer then
 * hides the view instead of failing.
 */
export function unsupported(err: unknown): boolean {
  return err instanceof Problem && (err.code === "ROUTE_NOT_FOUND" || err.code === "USAGE" || err.status === 404 && err.code !== "SESSION_NOT_FOUND");
}

/** The request formats of the three the server had before it could name them. */
const knownFormats = ["logbook", "openai", "anthropic"];

let formats: Promise<string[]> | undefined;

/**
 * The request formats the server offers (GET …/request?format=), learnt
 * once per page load from the server itself: asked for a format it does
 * not know, it answers USAGE naming the ones it does ("… is not one of
 * logbook, openai, …"), so a format added to the server appears here
 * without a change to the viewer. A server that ignores the parameter (it
 * answers 200) offers logbook's shape only; an answer that names none
 * leaves the three formats every server with formats has.
 */
export function requestFormats(id: string): Promise<string[]> {
  formats ??= getJSON(sessionURL(id, "/request", { format: "-" })).then(
    () => ["logbook"],
    (err) => {
      const m = err instanceof Problem && err.code === "USAGE" ? /is not one of ([\w-]+(?:, [\w-]+)*)/.exec(err.message) : null;
      if (m) return m[1].split(", ");
      formats = undefined; // asked again next time
      return knownFormats;
    },
  );
  return formats;
}
