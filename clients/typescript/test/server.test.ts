// The client against a real `logbook serve` (see serve.ts).

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, LogbookError, events as ev, rawJSON, retryable, type Event, type Input } from "../src/index.js";
import { encodeJSON, memberText } from "../src/json.js";
import { freeAddr, removeBin, Server } from "./serve.js";

const model = { provider: "anthropic", name: "claude-sonnet-4" };

let srv: Server;
let lb: Client;

before(async () => {
  srv = await Server.start();
  lb = new Client({ baseUrl: srv.url });
});

after(async () => {
  await srv?.stop();
  srv?.removeData();
  removeBin();
});

// aTurn is one whole turn with a tool call, built with the builders.
function aTurn(turn: number): Input<unknown>[] {
  return [
    ev.turnStart(turn),
    ev.userText(`u${turn}`, "list the files"),
    ev.stepStart(turn, 1),
    ev.assistant(turn, 1, { id: `a${turn}`, model, content: [ev.toolCallBlock(`c${turn}`, "ls", '{"dir":"."}')], usage: { input: 10, output: 3 } }),
    ev.toolCall(turn, 1, `c${turn}`, "ls", '{"dir":"."}'),
    ev.toolResult(turn, 1, `r${turn}`, `c${turn}`, "README.md go.mod"),
    ev.stepEnd(turn, 1),
    ev.stepStart(turn, 2),
    ev.assistantText(turn, 2, `a${turn}b`, model, "README.md and go.mod"),
    ev.stepEnd(turn, 2),
    ev.turnEnd(turn, ev.completed()),
  ];
}

test("create, append with builders, messages as expected; stored data is the builders' bytes", async () => {
  const s = await lb.create({ id: "t-basic", cwd: "/work" });
  assert.equal(s.header?.id, "t-basic");
  assert.equal(s.header?.cwd, "/work");
  const inputs = aTurn(1);
  const evs = await s.append(inputs, { expectedSeq: 0, flush: true });
  assert.deepEqual(
    evs.map((e) => e.seq),
    inputs.map((_, i) => i),
  );
  evs.forEach((e, i) => {
    assert.equal(e.type, inputs[i]!.type);
    assert.equal(e.dataText, encodeJSON(inputs[i]!.data), `seq ${i}: the stored data is what the builder wrote`);
  });
  const msgs = await s.messages();
  assert.deepEqual(msgs, [
    { id: "u1", role: "user", content: [{ type: "text", text: "list the files" }], source: { kind: "prompt" } },
    { id: "a1", role: "assistant", content: [{ type: "tool-call", id: "c1", name: "ls", arguments: '{"dir":"."}' }], source: { kind: "model", provider: "anthropic", model: "claude-sonnet-4" } },
    { id: "r1", role: "tool", toolCallId: "c1", content: [{ type: "text", text: "README.md go.mod" }], source: { kind: "tool", callId: "c1" } },
    { id: "a1b", role: "assistant", content: [{ type: "text", text: "README.md and go.mod" }], source: { kind: "model", provider: "anthropic", model: "claude-sonnet-4" } },
  ]);
  assert.deepEqual(await s.messages({ at: 1 }), [msgs[0]]);
  const info = await s.info();
  assert.equal(info.length, inputs.length);
  assert.equal(info.live, true);
  const read = await s.events({ from: 3, to: 5 });
  assert.deepEqual(
    read.map((e) => e.envelope),
    evs.slice(3, 5).map((e) => e.envelope),
  );
  assert.deepEqual(await s.surface(), [1, 3, 5, 8]);
  assert.equal((await s.inspect()).openTurn, null);
  const flushed = await s.flush();
  assert.equal(flushed.backends[0]?.durableSeq, inputs.length - 1);

  const child = await s.fork({ at: 1, as: "t-basic-child" });
  assert.equal(child.id, "t-basic-child");
  assert.deepEqual(await child.messages(), [msgs[0]]);
  const page = await lb.list({ limit: 1 });
  assert.equal(page.sessions.length, 1);
  assert.notEqual(page.nextCursor, null);
  await child.release();
});

test("every POST says its Content-Type, body or not: flush and release pass a server that requires it", async () => {
  const posts: string[] = [];
  const recording: typeof fetch = (input, init) => {
    if (init?.method === "POST") {
      const path = new URL(String(input)).pathname;
      posts.push(`${path.slice(path.lastIndexOf("/") + 1)} ${new Headers(init.headers).get("Content-Type")}`);
    }
    return fetch(input, init);
  };
  const c = new Client({ baseUrl: srv.url, fetch: recording });
  const s = await c.create({ id: "t-media-type" });
  await s.append([ev.turnStart(1)]);
  const child = await s.fork({ as: "t-media-type-child" });
  assert.equal((await s.flush()).backends[0]?.durableSeq, 0);
  await s.release();
  await child.release();
  assert.deepEqual(posts, [
    "sessions application/json",
    "events application/x-ndjson",
    "fork application/json",
    "flush application/json",
    "release application/json",
    "release application/json",
  ]);
  assert.equal((await s.info()).live, false);
});

test("the sessions . and .. are reached like any other (fetch removes those path segments)", async () => {
  for (const id of [".", ".."]) {
    const s = await lb.create({ id });
    assert.equal((await s.append([ev.turnStart(1)]))[0]!.seq, 0);
    assert.equal((await s.info()).id, id);
    assert.equal((await s.flush()).backends[0]?.durableSeq, 0);
    await s.release();
    const stored = lb.session(id);
    assert.deepEqual(
      (await stored.events()).map((e) => e.type),
      ["turn/start"],
    );
    assert.deepEqual(await stored.surface(), []);
  }
});

test("retryable: TOO_MANY_LIVE_SESSIONS (the server's cap on live sessions) may pass later", () => {
  const busy = new LogbookError({ code: "TOO_MANY_LIVE_SESSIONS", status: 503, detail: "max_live_sessions 1000 reached" });
  assert.equal(retryable(busy), true);
  assert.equal(retryable(new LogbookError({ code: "SESSION_NOT_FOUND", status: 404, detail: "" })), false);
});

test("documents come back byte for byte: RawJSON in, dataText and views out", async () => {
  const s = await lb.create();
  const doc = '{"n":1.0e0,"big":123456789012345678901.0,"b":1,"a":2}';
  const [e] = await s.append([{ type: "plugin:app/note", data: rawJSON(doc), ignorable: true }]);
  assert.equal(e!.dataText, doc);
  assert.equal((await s.events())[0]!.envelope, e!.envelope);
  const meta = '{"size":123456789012345678901.0,"ratio":2.50}';
  const evs = await s.append([
    ev.turnStart(1),
    ev.stepStart(1, 1),
    ev.assistant(1, 1, { id: "a1", model, content: [ev.toolCallBlock("c1", "stat", "{}")] }),
    ev.toolCall(1, 1, "c1", "stat", "{}"),
    ev.tool(1, 1, { id: "r1", callID: "c1", content: [ev.text("ok")], meta: rawJSON(meta) }),
  ]);
  assert.ok(evs[4]!.dataText.endsWith(`,"meta":${meta}}`), evs[4]!.dataText);
  const msgs = await s.text("messages");
  assert.equal(msgs, `[${memberText(evs[2]!.dataText, "message")},${memberText(evs[4]!.dataText, "message")}]`);
});

test("expectedSeq conflict is SEQ_CONFLICT with its details, nothing appended", async () => {
  const s = await lb.create();
  await s.append([ev.turnStart(1)]);
  const err = await s.append([ev.turnStart(2)], { expectedSeq: 0 }).then(
    () => assert.fail("appended at a wrong expectedSeq"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof LogbookError);
  assert.equal(err.code, "SEQ_CONFLICT");
  assert.equal(err.status, 409);
  assert.equal(err.expected, 0);
  assert.equal(err.actual, 1);
  assert.equal(err.appended, 0);
  assert.equal(err.firstSeq, 1);
  assert.equal((await s.info()).length, 1);
});

test("appendRetry never duplicates: a lost reply, a partial append, another writer", async () => {
  const s = await lb.create();
  const inputs = aTurn(1);
  const first = await s.appendRetry(0, inputs, { flush: true });
  // The same inputs at the same expected seq, as after a reply that was lost.
  const retries: string[] = [];
  const again = await s.appendRetry(0, inputs, { flush: true, onRetry: (e) => retries.push(e.code) });
  assert.deepEqual(
    again.map((e) => e.envelope),
    first.map((e) => e.envelope),
  );
  assert.deepEqual(retries, ["SEQ_CONFLICT"]);
  assert.equal((await s.info()).length, inputs.length);

  // Only the first three of turn 2 made it: the retry appends the rest.
  const turn2 = aTurn(2);
  const at = inputs.length;
  await s.append(turn2.slice(0, 3), { expectedSeq: at });
  const all = await s.appendRetry(at, turn2);
  assert.deepEqual(
    all.map((e) => e.seq),
    turn2.map((_, i) => at + i),
  );
  assert.equal((await s.info()).length, at + turn2.length);

  // Another writer's events at the expected seq: the conflict stands.
  const end = at + turn2.length;
  await s.append([ev.turnStart(3)]);
  const err = await s.appendRetry(end, [ev.turnStart(4)]).then(
    () => assert.fail("appended over another writer"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof LogbookError);
  assert.equal(err.code, "SEQ_CONFLICT");
  assert.equal(err.appended, 0);
  assert.equal((await s.info()).length, end + 1);
});

test("a bad input line is the server's problem; the lines before it stay", async () => {
  const s = await lb.create();
  const err = await s.append([ev.turnStart(1), { type: "turn/start", data: { turn: "one" } }, ev.turnEnd(1, ev.completed())]).then(
    () => assert.fail("a bad line was accepted"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof LogbookError);
  assert.equal(err.status, 422);
  assert.equal(err.code, "PAYLOAD_INVALID");
  assert.equal(err.line, 2);
  assert.equal(err.index, 1);
  assert.equal(err.appended, 1);
  assert.equal(err.firstSeq, 0);
  assert.equal((await s.info()).length, 1);

  const missing = await lb.session("no-such-session").messages().catch((e: unknown) => e);
  assert.ok(missing instanceof LogbookError);
  assert.equal(missing.code, "SESSION_NOT_FOUND");
  assert.equal(missing.status, 404);
});

test("follow yields appended events in order and resumes after the server restarts", async () => {
  const addr = await freeAddr();
  let own = await Server.start({ addr });
  try {
    const c = new Client({ baseUrl: own.url });
    const s = await c.create({ id: "t-follow" });
    const before = await s.append(aTurn(1), { flush: true });
    const ac = new AbortController();
    const got: Event[] = [];
    let reconnects = 0;
    const want = before.length + aTurn(2).length + 1; // + the resume's marker
    let caughtUp!: () => void;
    const caught = new Promise<void>((r) => (caughtUp = r));
    const done = (async () => {
      for await (const e of s.follow({ signal: ac.signal, onReconnect: () => reconnects++, maxBackoffMs: 200 })) {
        got.push(e);
        if (got.length === before.length) caughtUp();
        if (got.length === want) break;
      }
    })();
    await caught;
    await own.stop(); // the stream drops
    own = await Server.start({ addr, dataDir: own.dataDir });
    // The first append after the restart resumes the session, which may
    // append its own events first; the follower sees them all.
    const later = await s.append(aTurn(2), { flush: true });
    const timer = setTimeout(() => ac.abort(), 20_000);
    await done;
    clearTimeout(timer);
    assert.ok(reconnects >= 1, "the follower reconnected");
    const log = await s.events();
    assert.equal(log.length, want);
    assert.deepEqual(
      got.map((e) => e.envelope),
      log.map((e) => e.envelope),
    );
    assert.deepEqual(log.slice(0, before.length), before);
    assert.deepEqual(log.slice(-later.length), later);
  } finally {
    await own.stop();
    own.removeData();
  }
});

test("a server with a token refuses a client without it (UNAUTHENTICATED) and serves one with it", async () => {
  const token = "a-test-token-of-32-bytes-0123456";
  const dataDir = mkdtempSync(join(tmpdir(), "logbook-ts-data-"));
  const tokenFile = join(dataDir, "token");
  writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
  const own = await Server.start({ dataDir, args: ["--token-file", tokenFile] });
  try {
    const err = await new Client({ baseUrl: own.url }).create().catch((e: unknown) => e);
    assert.ok(err instanceof LogbookError);
    assert.equal(err.code, "UNAUTHENTICATED");
    assert.equal(err.status, 401);
    const s = await new Client({ baseUrl: own.url, token }).create({ id: "t-token" });
    assert.equal((await s.append([ev.turnStart(1)]))[0]!.seq, 0);
  } finally {
    await own.stop();
    own.removeData();
  }
});

// aRewrite is one turn whose tool result (seq 5) a rewrite replaces (seq 6).
function aRewrite(): Input<unknown>[] {
  return [
    ev.turnStart(1),
    ev.userText("u1", "list the files"),
    ev.stepStart(1, 1),
    ev.assistant(1, 1, { id: "a1", model, content: [ev.toolCallBlock("c1", "ls", "{}")] }),
    ev.toolCall(1, 1, "c1", "ls", "{}"),
    ev.toolResult(1, 1, "r1", "c1", "a.txt b.txt"),
    ev.replacing(ev.toolResult(1, 1, "r1", "c1", "[2 files]"), 5, 5, 5),
    ev.stepEnd(1, 1),
    ev.turnEnd(1, ev.completed()),
  ];
}

test("openapi is the server's description of /v1, naming every route the client calls", async () => {
  const doc = (await lb.openapi()) as { openapi: string; paths: Record<string, unknown> };
  assert.equal(doc.openapi, "3.1.0");
  for (const p of ["/v1/sessions/{id}/events/group", "/v1/sessions/{id}/open", "/v1/sessions/{id}/why", "/v1/sessions/{id}/lineage", "/v1/sessions/{id}/hold"]) {
    assert.ok(p in doc.paths, p);
  }
});

test("create takes every header field the server does", async () => {
  const s = await lb.create({ id: "t-sub", cwd: "/work", origin: "subagent", delegationDepth: 2, agentPreset: "coder", parentSession: "t-lead" });
  assert.deepEqual(
    { cwd: s.header?.cwd, origin: s.header?.["origin"], depth: s.header?.delegationDepth, preset: s.header?.["agentPreset"], parent: s.header?.["parentSession"] },
    { cwd: "/work", origin: "subagent", depth: 2, preset: "coder", parent: "t-lead" },
  );
  await assert.rejects(lb.create({ origin: "robot" as "subagent" }), (err: LogbookError) => err.code === "SEED_INVALID");
});

test("appendGroup appends all of its inputs or none", async () => {
  const s = await lb.create({ id: "t-group" });
  const note = (n: number): Input<unknown> => ({ type: "app/note", data: n, ignorable: true });
  await assert.rejects(s.appendGroup([note(1), ev.turnStart(1), ev.userText("u1", "one"), ev.userText("u2", "two")]), (err: LogbookError) => {
    assert.equal(err.code, "SURFACE_OP_NOT_ALLOWED");
    assert.equal(err.index, 3);
    assert.equal(err.line, 4);
    assert.equal(err.appended, 0);
    return true;
  });
  assert.equal((await s.info()).length, 0);
  await assert.rejects(s.appendGroup([note(1)], { expectedSeq: 1 }), (err: LogbookError) => err.code === "SEQ_CONFLICT" && err.appended === 0);
  const evs = await s.appendGroup([note(1), ev.turnStart(1), ev.userText("u1", "one"), note(2)], { expectedSeq: 0, flush: true });
  assert.deepEqual(
    evs.map((e) => e.seq),
    [0, 1, 2, 3],
  );
});

test("why, shadowed, tokens, lineage, request formats, open, holds and delete", async () => {
  const s = await lb.create({ id: "t-views" });
  await s.append(aRewrite(), { flush: true });
  const why = await s.why(6);
  assert.equal(why.seq, 6);
  assert.deepEqual(why.replace, { startSeq: 5, endSeq: 5 });
  assert.equal(why.derivedFrom?.[0]?.seq, 5);
  assert.equal(why.derivedFrom?.[0]?.relation, "shadowed");
  await assert.rejects(s.why(9), (err: LogbookError) => err.code === "INVALID_BOUNDARY");
  assert.deepEqual(await s.shadowed(), { shadowed: [5], replacedBy: { "5": 6 } });
  assert.deepEqual(await s.shadowed({ at: 5 }), { shadowed: [], replacedBy: {} });
  const tk = await s.tokens();
  assert.equal(tk.total, tk.headerTokens + tk.surfaceTokens);
  assert.deepEqual(
    tk.nodes.map((n) => n.seq),
    await s.surface(),
  );
  assert.ok((await s.text("messages", { format: "markdown" })).includes("[2 files]"));
  await assert.rejects(s.request({ format: "openai" }), (err: LogbookError) => err.code === "REQUEST_HEADER_MISSING");

  const child = await s.fork({ at: 6, as: "t-views-child" });
  const lin = await child.lineage();
  assert.deepEqual(lin.ancestors, [{ id: "t-views", seq: 6 }]);
  assert.deepEqual(lin.tree, { id: "t-views", children: [{ id: "t-views-child", seq: 6, children: [] }] });

  await s.release();
  const opened = await s.open();
  assert.deepEqual([opened.alreadyLive, opened.nextSeq, opened.repaired], [false, 10, []]);
  assert.equal((await s.open()).alreadyLive, true);
  await s.release();
  const held = await s.hold({ reason: "LEGAL-1" });
  assert.equal(held.changed, true);
  assert.equal(held.record?.op, "hold");
  assert.equal(held.record?.by, "api");
  assert.equal(held.record?.reason, "LEGAL-1");
  assert.equal(held.record?.events, 10);
  assert.deepEqual(await s.hold(), { changed: false });
  await assert.rejects(s.delete(), (err: LogbookError) => err.code === "SESSION_HELD");
  assert.equal((await s.releaseHold()).changed, true);
  await s.delete({ reason: "done" });
  await assert.rejects(s.info(), (err: LogbookError) => err.code === "SESSION_NOT_FOUND");
});

test("messages and request in every format, now and as of a seq; a provider request needs a request header", async () => {
  const s = await lb.create({ id: "t-formats" });
  const missing = (err: LogbookError) => err.code === "REQUEST_HEADER_MISSING" && err.status === 409;
  // An empty session: every messages format renders, a provider request has no header.
  assert.deepEqual(await s.messages({ format: "logbook" }), []);
  assert.deepEqual(await s.messages({ format: "openai" }), []);
  assert.deepEqual(await s.messages({ format: "anthropic" }), []);
  assert.equal(await s.messages({ format: "markdown" }), "");
  await assert.rejects(s.request({ format: "openai" }), missing);

  await s.append(aTurn(1), { flush: true }); // seqs 0–10, no request header
  const openai = await s.messages({ format: "openai" });
  assert.deepEqual(
    openai.map((m) => (m as { role: string }).role),
    ["user", "assistant", "tool", "assistant"],
  );
  assert.deepEqual(openai[0], { role: "user", content: "list the files" });
  assert.deepEqual(openai, JSON.parse(await s.text("messages", { format: "openai" })));
  const anthropic = await s.messages({ format: "anthropic" });
  assert.deepEqual(
    anthropic.map((m) => (m as { role: string }).role),
    ["user", "assistant", "user", "assistant"],
  );
  assert.deepEqual(await s.messages({ at: 1, format: "openai" }), [openai[0]]);
  const responses = await s.messages({ format: "openai-responses" });
  assert.deepEqual(
    responses.map((i) => (i as { type: string }).type),
    ["message", "function_call", "function_call_output", "message"],
  );
  // At seq 3 the assistant message has announced c1 and no result has come:
  // the provider formats refuse, naming the call; logbook's shows the messages.
  const pending = (err: LogbookError) => err.code === "TOOL_CALLS_PENDING" && err.status === 409 && err.problem.meta?.callIds === '["c1"]';
  for (const format of ["openai", "anthropic", "openai-responses"] as const) {
    await assert.rejects(s.messages({ at: 3, format }), pending);
  }
  assert.equal((await s.messages({ at: 3 })).length, 2);
  const md = await s.messages({ format: "markdown" });
  assert.equal(typeof md, "string");
  assert.ok(md.startsWith("## user\n\nlist the files"), md);
  assert.equal(await s.messages({ at: 1, format: "markdown" }), "## user\n\nlist the files");

  const req = await s.request();
  assert.equal(req.header, null);
  assert.deepEqual(req.messages, await s.messages());
  assert.deepEqual(await s.request({ at: 1 }), { header: null, context: null, messages: await s.messages({ at: 1 }) });
  await assert.rejects(s.request({ format: "openai" }), missing);
  await assert.rejects(s.request({ format: "anthropic" }), missing);

  // A header at seq 11: the provider bodies from there on, not before.
  await s.append([ev.requestHeader({ config: { provider: model.provider, model: model.name, maxTokens: 1024 } }, "initial"), ...aTurn(2)], { flush: true });
  for (const format of ["openai", "anthropic", "openai-responses"] as const) {
    const body = (await s.request({ format })) as { model: string };
    assert.equal(body.model, "claude-sonnet-4");
    assert.deepEqual(body, JSON.parse(await s.text("request", { format })));
    assert.equal(((await s.request({ at: 11, format })) as { model: string }).model, "claude-sonnet-4");
    await assert.rejects(s.request({ at: 10, format }), missing);
    // Seq 15 announces c2, unanswered there.
    await assert.rejects(s.request({ at: 15, format }), (err: LogbookError) => err.code === "TOOL_CALLS_PENDING" && err.problem.meta?.callIds === '["c2"]');
  }
  assert.deepEqual((await s.request()).header, { config: { provider: "anthropic", model: "claude-sonnet-4", maxTokens: 1024 } });
});
