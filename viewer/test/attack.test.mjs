// No web page can drive a loopback `logbook serve`: real Chromium, with
// the names attacker.test and evil.test mapped to 127.0.0.1 by
// --host-resolver-rules, against a real serve that holds a stored session
// with events (victim), a stored session under a legal hold (held) and a
// live one (live).
//
// - A page on another origin (attacker.test, served by a small server on
//   another loopback port) sends, to every route of docs/openapi.json and
//   every method of the Connect service of sessions.proto (both read from
//   their files, so a new route is tried without a change here), every
//   request a page can send without a preflight: no-cors GET and POST with
//   no body, an empty one, text/plain, form-encoded and multipart, cors-mode
//   GET and text/plain POST, and EventSource on the event stream.
// - A page on a rebound name (evil.test at serve's own port: same-origin to
//   the browser, so it can send anything) sends every route with any method
//   and the media types the routes want, and opens EventSource.
//
// Nothing may be read (a response is opaque, refused by the browser, or 403
// with HOST_NOT_ALLOWED or ORIGIN_NOT_ALLOWED; no stream event arrives), and
// the store must be as it was: the same sessions, each with the same events
// and the same live state, and no new audit record (hold, release, delete).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { browser, cleanup, logbook, repoRoot, Server, tempDir } from "./harness.mjs";

/** Every operation of docs/openapi.json, as {method, path}. */
function apiRoutes() {
  const doc = JSON.parse(readFileSync(join(repoRoot, "docs", "openapi.json"), "utf8"));
  const out = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const m of Object.keys(ops)) if (m !== "parameters") out.push({ method: m.toUpperCase(), path });
  }
  return out;
}

/** Every method of the services of sessions.proto, as {name, path, streaming}. */
function connectMethods() {
  const proto = readFileSync(join(repoRoot, "sdk", "proto", "logbook", "v1", "sessions.proto"), "utf8");
  const pkg = /^package\s+([\w.]+);/m.exec(proto)[1];
  const out = [];
  for (const svc of proto.matchAll(/^service\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    for (const m of svc[2].matchAll(/rpc\s+(\w+)\s*\(\s*(stream\s+)?[\w.]+\s*\)\s*returns\s*\(\s*(stream\s+)?[\w.]+\s*\)/g)) {
      out.push({ name: m[1], path: `/${pkg}.${svc[1]}/${m[1]}`, streaming: Boolean(m[2] || m[3]) });
    }
  }
  return out;
}

/** The text of the sessions' user message. */
const secret = "a secret of the victim";

/** The sessions the pages go after. */
const targets = ["victim", "held", "live"];

/** A new session id for each request that would create one. */
let made = 0;
const newID = () => `evil-${++made}`;

/** The body a route would take from a client: {type, text}, or undefined for none. */
function routeBody(path) {
  if (path === "/v1/sessions") return { type: "application/json", text: JSON.stringify({ id: newID() }) };
  if (path.endsWith("/events") || path.endsWith("/events/group")) return { type: "application/x-ndjson", text: '{"type":"turn/start","data":{"turn":99}}\n' };
  if (path.endsWith("/fork")) return { type: "application/json", text: JSON.stringify({ as: newID() }) };
  if (path.endsWith("/hold") || path.endsWith("/release-hold")) return { type: "application/json", text: '{"reason":"evil"}' };
  return { type: "application/json", text: "{}" };
}

/** The JSON request message a Connect method would take for session id. */
function connectMessage(name, id) {
  switch (name) {
    case "Create":
      return { sessionId: newID() };
    case "Fork":
      return { sourceId: id, childId: newID() };
    case "Append":
    case "AppendGroup":
    case "AppendStream":
      return { sessionId: id, events: [{ type: "turn/start", data: '{"turn":99}' }] };
    case "Delete":
    case "Hold":
    case "ReleaseHold":
      return { sessionId: id, reason: "evil" };
    default:
      return { sessionId: id };
  }
}

/** Each route of docs/openapi.json once per target session ({id} filled in). */
function expand(routes) {
  const out = [];
  for (const r of routes) {
    if (!r.path.includes("{id}")) out.push({ ...r, url: r.path });
    else for (const id of targets) out.push({ ...r, url: r.path.replaceAll("{id}", encodeURIComponent(id)) });
  }
  return out;
}

/**
 * The requests of the page on another origin: for each route and Connect
 * method, each one a page can send without a preflight. A request is
 * {label, url, method, mode, body: {kind, text}}.
 */
function crossOriginRequests(base) {
  const out = [];
  const simple = (label, url, text) => {
    out.push({ label: `no-cors GET ${label}`, url, method: "GET", mode: "no-cors" });
    out.push({ label: `cors GET ${label}`, url, method: "GET", mode: "cors" });
    for (const kind of ["none", "empty", "text", "form", "multipart"]) {
      out.push({ label: `no-cors POST (${kind}) ${label}`, url, method: "POST", mode: "no-cors", body: { kind, text: text() } });
    }
    out.push({ label: `cors POST (text) ${label}`, url, method: "POST", mode: "cors", body: { kind: "text", text: text() } });
  };
  for (const r of expand(apiRoutes())) simple(`${r.method} ${r.url}`, base + r.url, () => routeBody(r.path).text);
  for (const m of connectMethods()) {
    for (const id of targets) {
      simple(`${m.path} (${id})`, base + m.path, () => JSON.stringify(connectMessage(m.name, id)));
      const q = new URLSearchParams({ encoding: "json", message: JSON.stringify(connectMessage(m.name, id)) });
      out.push({ label: `no-cors Connect GET ${m.path} (${id})`, url: `${base}${m.path}?${q}`, method: "GET", mode: "no-cors" });
    }
  }
  return out;
}

/**
 * The requests of the page on a rebound name, same-origin to the browser:
 * every route with any method and the body and media type the route
 * wants, every Connect method as a unary JSON call or an enveloped stream,
 * and the viewer's page.
 */
function reboundRequests() {
  const out = [{ label: "GET /", url: "/", method: "GET", mode: "same-origin" }];
  for (const r of expand(apiRoutes())) {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      const body = method === "GET" ? undefined : routeBody(r.path);
      out.push({ label: `${method} ${r.url} (documented: ${r.method})`, url: r.url, method, mode: "same-origin", body: body && { kind: "typed", ...body } });
    }
  }
  for (const m of connectMethods()) {
    for (const id of targets) {
      const msg = JSON.stringify(connectMessage(m.name, id));
      const body = m.streaming ? { kind: "envelope", type: "application/connect+json", text: msg } : { kind: "typed", type: "application/json", text: msg };
      out.push({ label: `Connect ${m.path} (${id})`, url: m.path, method: "POST", mode: "same-origin", body });
    }
  }
  return out;
}

/** The event-stream URLs EventSource opens: each GET …/events route for each target, plain and followed. */
function streamURLs(base) {
  const out = [];
  for (const r of expand(apiRoutes())) {
    if (r.method === "GET" && r.path.endsWith("/events")) out.push(base + r.url, `${base}${r.url}?follow=true`);
  }
  return out;
}

/**
 * Runs in the page: sends each request and answers what the page's script
 * could see of it: {label, rejected} when fetch failed, else {label, type,
 * status, contentType, text}; then opens EventSource on each stream URL
 * and counts the events it delivered within wait ms.
 */
async function attack({ requests, streams, wait }) {
  const bodyOf = (b) => {
    switch (b?.kind) {
      case undefined:
      case "none":
        return { body: undefined };
      case "empty":
        return { body: "" };
      case "text":
        return { body: b.text };
      case "form":
        return { body: new URLSearchParams({ [b.text]: "" }) };
      case "multipart": {
        const f = new FormData();
        f.append("message", b.text);
        return { body: f };
      }
      case "typed":
        return { body: b.text, headers: { "Content-Type": b.type } };
      case "envelope": {
        const msg = new TextEncoder().encode(b.text);
        const env = new Uint8Array(5 + msg.length);
        new DataView(env.buffer).setUint32(1, msg.length);
        env.set(msg, 5);
        return { body: env, headers: { "Content-Type": b.type, "Connect-Protocol-Version": "1" } };
      }
    }
    throw new Error(`unknown body kind ${b.kind}`);
  };
  const seen = [];
  for (const r of requests) {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), 5000);
    try {
      const { body, headers } = bodyOf(r.body);
      const res = await fetch(r.url, { method: r.method, mode: r.mode, body, headers, signal: stop.signal, credentials: "include" });
      const text = res.type === "opaque" ? "" : (await res.text()).slice(0, 2000);
      seen.push({ label: r.label, type: res.type, status: res.status, code: res.headers.get("Logbook-Code"), text });
    } catch (err) {
      seen.push({ label: r.label, rejected: String(err) });
    } finally {
      clearTimeout(timer);
    }
  }
  const streamed = [];
  for (const url of streams) {
    streamed.push(
      await new Promise((resolve) => {
        const es = new EventSource(url);
        let events = 0;
        const done = (how) => {
          es.close();
          resolve({ url, events, how });
        };
        es.onmessage = () => events++;
        es.onerror = () => done("error");
        setTimeout(() => done("timeout"), wait);
      }),
    );
  }
  return { seen, streamed };
}

/**
 * The code of a Connect stream's refusal: the stream holds nothing but its
 * end message (flag 2), an error with Logbook-Code in its metadata.
 */
function streamRefusal(text) {
  if (text.charCodeAt(0) !== 2) return undefined;
  try {
    const end = JSON.parse(text.slice(5));
    return end.error?.code === "permission_denied" ? end.metadata?.["Logbook-Code"]?.[0] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the page's script read: every answer it could see that is not a
 * refusal with one of codes (403 with Logbook-Code: problem+json on /v1,
 * the RPC protocol's error on Connect; or a Connect stream's refusal) or
 * that holds the sessions' text.
 */
function readable(seen, codes) {
  const out = [];
  for (const s of seen) {
    if (s.rejected !== undefined || s.type === "opaque") continue;
    const refused = s.status === 403 ? s.code : s.status === 200 ? streamRefusal(s.text) : undefined;
    if (codes.includes(refused) && !s.text.includes(secret)) continue;
    out.push(`${s.label}: ${s.status} ${s.code} ${s.text.slice(0, 120)}`);
  }
  return out;
}

/** The store as the test process sees it through the API and the CLI. */
async function snapshot(srv, data) {
  const get = async (path) => {
    const r = await fetch(srv.url + path);
    assert.equal(r.status, 200, `GET ${path}: ${r.status}`);
    return r;
  };
  const list = await (await get("/v1/sessions?limit=1000")).json();
  const sessions = {};
  for (const s of list.sessions.sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const p = `/v1/sessions/${encodeURIComponent(s.id)}`;
    const info = await (await get(p)).json();
    sessions[s.id] = { live: s.live, length: info.length, events: await (await get(`${p}/events`)).text() };
  }
  return { sessions, audit: logbook(["--data", data, "audit", "--json"]) };
}

let ctx;
let srv;
let data;
let attacker;

before(async () => {
  data = join(tempDir("logbook-viewer-attack-"), "data");
  const turn = [
    { type: "turn/start", data: { turn: 1 } },
    { type: "user/message", data: { id: "u1", role: "user", content: [{ type: "text", text: secret }], source: { kind: "prompt" } }, surfaceOp: "append" },
    { type: "turn/end", data: { turn: 1, reason: { kind: "completed" } } },
  ];
  const lines = turn.map((l) => JSON.stringify(l) + "\n").join("");
  logbook(["--data", data, "append", "victim"], lines);
  logbook(["--data", data, "append", "held"], lines);
  logbook(["--data", data, "hold", "held", "--reason", "the attack test"]);
  srv = await Server.start(["--data", data]);
  let r = await fetch(`${srv.url}/v1/sessions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"id":"live"}' });
  assert.equal(r.status, 201, await r.text());
  r = await fetch(`${srv.url}/v1/sessions/live/events`, { method: "POST", headers: { "Content-Type": "application/x-ndjson" }, body: lines });
  assert.equal(r.status, 200, await r.text());
  attacker = createServer((_, res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<!doctype html><title>attacker.test</title><p>an ordinary page"));
  await new Promise((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  ctx = await browser(["--host-resolver-rules=MAP evil.test 127.0.0.1, MAP attacker.test 127.0.0.1"]);
});

after(async () => {
  await ctx?.close();
  await srv?.stop();
  attacker?.close();
  cleanup();
});

test("a page on another origin reads nothing and changes nothing: every route, Connect method and the event stream", async () => {
  const before = await snapshot(srv, data);
  assert.deepEqual(Object.keys(before.sessions), ["held", "live", "victim"]);
  assert.equal(before.sessions.live.live, true);
  const page = await ctx.newPage();
  await page.goto(`http://attacker.test:${attacker.address().port}/`);
  assert.equal(await page.evaluate(() => location.origin), `http://attacker.test:${attacker.address().port}`);
  const requests = crossOriginRequests(srv.url);
  const { seen, streamed } = await page.evaluate(attack, { requests, streams: streamURLs(srv.url), wait: 1500 });
  await page.close();
  const opaque = seen.filter((s) => s.type === "opaque").length;
  console.log(`another origin: ${seen.length} requests (${opaque} opaque, ${seen.length - opaque} refused by the browser), ${streamed.length} event streams`);
  assert.equal(seen.length, requests.length);
  const read = readable(seen, ["ORIGIN_NOT_ALLOWED"]);
  assert.deepEqual(read.slice(0, 20), [], `the page read ${read.length} answers`);
  assert.deepEqual(streamed.filter((s) => s.events > 0), []);
  assert.deepEqual(await snapshot(srv, data), before);
});

test("a page on a rebound name reads nothing and changes nothing: every route with any method, Connect and the event stream", async () => {
  const before = await snapshot(srv, data);
  const port = new URL(srv.url).port;
  const page = await ctx.newPage();
  await page.goto(`http://evil.test:${port}/rebound`);
  assert.equal(await page.evaluate(() => location.origin), `http://evil.test:${port}`);
  const requests = reboundRequests();
  const { seen, streamed } = await page.evaluate(attack, { requests, streams: streamURLs(""), wait: 1500 });
  await page.close();
  const byCode = {};
  for (const s of seen) {
    const code = s.rejected !== undefined ? "rejected" : `${s.status} ${s.code ?? streamRefusal(s.text)}`;
    byCode[code] = (byCode[code] ?? 0) + 1;
  }
  console.log(`rebound name: ${seen.length} requests, answered ${JSON.stringify(byCode)}; ${streamed.length} event streams`);
  assert.equal(seen.length, requests.length);
  const read = readable(seen, ["HOST_NOT_ALLOWED", "ORIGIN_NOT_ALLOWED"]);
  assert.deepEqual(read.slice(0, 20), [], `the page read ${read.length} answers`);
  assert.deepEqual(streamed.filter((s) => s.events > 0), []);
  assert.deepEqual(await snapshot(srv, data), before);
});
