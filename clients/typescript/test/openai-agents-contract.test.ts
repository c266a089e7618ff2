// The contracts of the OpenAI Agents SDK's Session and its optional
// history capabilities, for LogbookSession against a real `logbook serve`:
// history transactions under operation ids (the same id twice, a suffix
// mismatch, another transaction under a used id), popItem and
// clearSession as records, history mutations, lossless items, and two
// writers on one session.

import assert from "node:assert/strict";
import { createServer, type Server as HTTPServer } from "node:http";
import { after, before, test } from "node:test";
import { applySessionHistoryMutations, MemorySession, type AgentInputItem } from "@openai/agents-core";
import { Client, LogbookError, rawJSON } from "../src/index.js";
import { LogbookSession, RECORD_TYPE } from "../src/openai-agents/index.js";
import { removeBin, Server } from "./serve.js";

let server: Server;
let client: Client;
let n = 0;

before(async () => {
  server = await Server.start();
  client = new Client({ baseUrl: server.url });
});

after(async () => {
  await server.stop();
  server.removeData();
  removeBin();
});

const user = (text: string): AgentInputItem => ({ type: "message", role: "user", content: text });
const say = (text: string): AgentInputItem => ({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });
const call = (id: string, args = "{}"): AgentInputItem => ({ type: "function_call", callId: id, name: "lookup", arguments: args, status: "completed" });
const result = (id: string, text: string): AgentInputItem => ({ type: "function_call_result", callId: id, name: "lookup", status: "completed", output: { type: "text", text } });

function fresh(key = `contract-${++n}`): LogbookSession {
  return new LogbookSession({ client, key });
}

async function length(s: LogbookSession): Promise<number> {
  return (await s.session.info()).length;
}

async function rejects(p: Promise<unknown>, code: string): Promise<LogbookError> {
  let caught: unknown;
  await p.catch((err) => (caught = err));
  assert.ok(caught instanceof LogbookError, `expected ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code);
  return caught;
}

test("the same operation id twice applies its transaction once, from any adapter", async () => {
  const s = fresh();
  await s.addItems([user("hi")]);
  const tx = { type: "append_items" as const, items: [call("c1"), result("c1", "found"), say("done")] };
  await s.applyHistoryTransaction({ operationId: "op-1", transaction: tx });
  const len = await length(s);
  await s.applyHistoryTransaction({ operationId: "op-1", transaction: structuredClone(tx) });
  const other = new LogbookSession({ client, key: s.key });
  await other.applyHistoryTransaction({ operationId: "op-1", transaction: { items: structuredClone(tx.items), type: "append_items" } });
  assert.equal(await length(s), len, "a replay appends nothing");
  assert.deepStrictEqual(await other.getItems(), [user("hi"), ...tx.items]);
  // The transaction's items are typed events too.
  const types = (await s.session.events()).map((e) => e.type).filter((t) => t !== RECORD_TYPE);
  assert.deepStrictEqual(types, ["turn/start", "user/message", "step/start", "assistant/message", "tool/call", "tool/result", "step/end", "step/start", "assistant/message", "step/end", "turn/end"]);
});

test("the server holds the operation id: its record replays, other events under it conflict", async () => {
  const s = fresh();
  await s.applyHistoryTransaction({ operationId: "op-server", transaction: { type: "append_items", items: [user("a")] } });
  const rec = (await s.session.events()).find((e) => e.type === RECORD_TYPE)!;
  const before = await length(s);
  const again = await s.session.appendOnce("op-server", [{ type: RECORD_TYPE, data: rawJSON(rec.dataText), ignorable: true }]);
  assert.equal(again.replayed, true);
  assert.deepStrictEqual(again.events.map((e) => e.seq), [rec.seq]);
  const err = await rejects(s.session.appendOnce("op-server", [{ type: RECORD_TYPE, data: { op: "clear" }, ignorable: true }]), "OPERATION_CONFLICT");
  assert.equal(err.firstSeq, rec.seq);
  assert.deepStrictEqual(err.problem.meta, { count: "1", operationId: "op-server" });
  assert.equal(await length(s), before);
  assert.deepStrictEqual(await fresh(s.key).getItems(), [user("a")]);
});

test("replace_suffix replaces a matching suffix; the log keeps the items it replaced", async () => {
  const s = fresh();
  await s.addItems([user("q"), call("c1"), result("c1", "partial")]);
  await s.applyHistoryTransaction({
    operationId: "op-replace",
    transaction: { type: "replace_suffix", expectedSuffix: [call("c1"), result("c1", "partial")], replacement: [call("c1"), result("c1", "partial"), say("answer")] },
  });
  assert.deepStrictEqual(await s.getItems(), [user("q"), call("c1"), result("c1", "partial"), say("answer")]);
  // Retried after the history moved on, it is still a replay, not a mismatch.
  await s.addItems([user("next")]);
  const len = await length(s);
  await s.applyHistoryTransaction({
    operationId: "op-replace",
    transaction: { type: "replace_suffix", expectedSuffix: [call("c1"), result("c1", "partial")], replacement: [call("c1"), result("c1", "partial"), say("answer")] },
  });
  assert.equal(await length(s), len);
  assert.deepStrictEqual(await fresh(s.key).getItems(), [user("q"), call("c1"), result("c1", "partial"), say("answer"), user("next")]);
});

test("replace_suffix with a suffix the history does not end with is refused and changes nothing", async () => {
  const s = fresh();
  await s.addItems([user("q"), say("a1")]);
  const len = await length(s);
  for (const expectedSuffix of [[say("other")], [user("q"), say("a1"), say("a1")], [user("q")]]) {
    await rejects(s.applyHistoryTransaction({ operationId: "op-mismatch", transaction: { type: "replace_suffix", expectedSuffix, replacement: [say("new")] } }), "SUFFIX_MISMATCH");
  }
  assert.equal(await length(s), len, "nothing appended");
  assert.deepStrictEqual(await fresh(s.key).getItems(), [user("q"), say("a1")]);
  // The refused id was never used: it applies now with a matching suffix.
  await s.applyHistoryTransaction({ operationId: "op-mismatch", transaction: { type: "replace_suffix", expectedSuffix: [say("a1")], replacement: [say("a2")] } });
  assert.deepStrictEqual(await s.getItems(), [user("q"), say("a2")]);
});

test("another transaction under a used operation id is OPERATION_CONFLICT and changes nothing", async () => {
  const s = fresh();
  await s.applyHistoryTransaction({ operationId: "op-used", transaction: { type: "append_items", items: [user("one")] } });
  const len = await length(s);
  const err = await rejects(s.applyHistoryTransaction({ operationId: "op-used", transaction: { type: "append_items", items: [user("two")] } }), "OPERATION_CONFLICT");
  assert.deepStrictEqual(err.problem.meta, { count: "1", operationId: "op-used" });
  assert.equal(err.firstSeq, 0);
  await rejects(fresh(s.key).applyHistoryTransaction({ operationId: "op-used", transaction: { type: "replace_suffix", expectedSuffix: [user("one")], replacement: [] } }), "OPERATION_CONFLICT");
  // clearSession empties the history, not the used ids (MemorySession forgets them).
  await s.clearSession();
  await rejects(s.applyHistoryTransaction({ operationId: "op-used", transaction: { type: "append_items", items: [user("two")] } }), "OPERATION_CONFLICT");
  assert.equal(await length(s), len + 1, "only the clear record was appended");
  assert.deepStrictEqual(await s.getItems(), []);
});

test("a malformed transaction or operation id is refused before anything is written", async () => {
  const s = fresh();
  await s.addItems([user("x")]);
  const len = await length(s);
  await assert.rejects(s.applyHistoryTransaction({ operationId: " ", transaction: { type: "append_items", items: [] } }), /non-empty operationId/);
  await assert.rejects(s.applyHistoryTransaction({ operationId: "op", transaction: { type: "drop_all" } as never }), /unknown history transaction type/);
  await rejects(s.applyHistoryTransaction({ operationId: "op-é", transaction: { type: "append_items", items: [user("y")] } }), "OPERATION_ID_INVALID");
  await rejects(s.applyHistoryTransaction({ operationId: "x".repeat(129), transaction: { type: "append_items", items: [user("y")] } }), "OPERATION_ID_INVALID");
  await assert.rejects(s.applyHistoryTransaction({ operationId: "op", transaction: { type: "append_items", items: [{ ...user("y"), providerData: { raw: new Uint8Array(2) } } as AgentInputItem] } }), /\/items\/0\/providerData\/raw is a Uint8Array instance/);
  assert.equal(await length(s), len);
});

test("popItem and clearSession are records getItems honours, as MemorySession behaves", async () => {
  const s = fresh();
  const mem = new MemorySession();
  const steps: [string, (x: LogbookSession | MemorySession) => Promise<unknown>][] = [
    ["add", (x) => x.addItems([user("a"), say("b"), user("c")])],
    ["pop", (x) => x.popItem()],
    ["pop", (x) => x.popItem()],
    ["add", (x) => x.addItems([say("d")])],
    ["clear", (x) => x.clearSession()],
    ["pop", (x) => x.popItem()],
    ["add", (x) => x.addItems([user("e"), say("f")])],
  ];
  for (const [what, f] of steps) {
    assert.deepStrictEqual(await f(s), await f(mem), what);
    assert.deepStrictEqual(await s.getItems(), await mem.getItems(), what);
  }
  assert.deepStrictEqual(await fresh(s.key).getItems(), [user("e"), say("f")]);
  // The log still holds every item and says what happened to them.
  const ops = (await s.session.events()).filter((e) => e.type === RECORD_TYPE).map((e) => (e.data as { op: string }).op);
  assert.deepStrictEqual(ops, ["add", "pop", "pop", "add", "clear", "add"], "a pop of an empty history writes nothing");
  const texts = (await s.session.transcript()).map((t) => t.message.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
  assert.deepStrictEqual(texts, ["a", "b", "c", "d", "e", "f"]);
});

test("history mutations replace a function call as the SDK does", async () => {
  const s = fresh();
  const items = [user("q"), call("c1", '{"v":1}'), result("c1", "r"), call("c2"), result("c2", "r2"), say("a")];
  await s.addItems(items);
  const mutations = [{ type: "replace_function_call" as const, callId: "c1", replacement: call("c1", '{"v":2}') as Extract<AgentInputItem, { type: "function_call" }> }];
  await s.applyHistoryMutations({ mutations });
  const want = applySessionHistoryMutations(items, mutations);
  assert.deepStrictEqual(await s.getItems(), want);
  assert.deepStrictEqual(await fresh(s.key).getItems(), want);
});

test("items come back deep-equal, whatever they hold; non-JSON items are refused", async () => {
  const s = fresh("lossless ✓ key with spaces");
  const odd: AgentInputItem[] = [
    { role: "user", content: [{ type: "input_text", text: "é\u2028\"\\\n\u0001 𝄞" }, { type: "input_image", image: "data:image/png;base64,iVBORw0KGgo=" }] },
    { type: "reasoning", id: "rs_1", content: [], providerData: { encrypted: "xyz", n: [0.1, 1e21, -5, 9007199254740991], nested: { a: null, b: [true, false, {}] } } },
    { type: "message", role: "assistant", status: "completed", content: [{ type: "refusal", refusal: "no" }, { type: "output_text", text: "" }] },
    { type: "hosted_tool_call", name: "web_search", status: "completed", providerData: { q: "x" } },
    { type: "unknown", providerData: { anything: ["goes"] } },
    { role: "system", content: "be brief" },
  ];
  await s.addItems(odd);
  assert.deepStrictEqual(await fresh(s.key).getItems(), odd);
  assert.equal(s.session.id, "lossless ✓ key with spaces");
  const len = await length(s);
  await assert.rejects(s.addItems([{ role: "user", content: "x", providerData: { f: () => 1 } } as AgentInputItem]), /\/0\/providerData\/f is a function/);
  await assert.rejects(s.addItems([{ role: "user", content: "x", providerData: { n: NaN } } as AgentInputItem]), /the number NaN/);
  assert.equal(await length(s), len);
  assert.deepStrictEqual(await s.getItems(0), []);
  assert.deepStrictEqual(await s.getItems(100), odd);
});

test("two adapters writing one session at once lose nothing and keep the loop rules", async () => {
  const a = fresh();
  const b = new LogbookSession({ client, key: a.key });
  await a.addItems([user("start")]);
  await Promise.all(
    Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).addItems([user(`q${i}`), call(`c${i}`), result(`c${i}`, `r${i}`), say(`a${i}`)])),
  );
  const got = await fresh(a.key).getItems();
  assert.equal(got.length, 41);
  for (let i = 0; i < 10; i++) {
    const at = got.findIndex((it) => JSON.stringify(it) === JSON.stringify(user(`q${i}`)));
    assert.ok(at > 0, `q${i} is stored`);
    assert.deepStrictEqual(got.slice(at, at + 4), [user(`q${i}`), call(`c${i}`), result(`c${i}`, `r${i}`), say(`a${i}`)], `q${i}'s items are together`);
  }
  const events = await a.session.events();
  // "start" had no answer: the first q joined its turn.
  assert.equal(events.filter((e) => e.type === "turn/start").length, 10);
  assert.equal(events.filter((e) => e.type === "tool/result").length, 10);
  assert.equal((await a.session.inspect()).openTurn, null, "every turn ended with its final message");
});

test("a reply's calls and their results may come in separate writes; a new prompt closes calls left open", async () => {
  const errors: unknown[] = [];
  const s = new LogbookSession({ client, key: `contract-${++n}`, onMirrorError: (e) => errors.push(e) });
  await s.addItems([user("q1")]);
  await s.addItems([call("c1"), call("c2")]);
  await s.addItems([result("c2", "two")]);
  await s.addItems([result("c1", "one"), say("a1")]);
  await s.addItems([user("q2"), call("c3")]);
  await s.addItems([user("q3")]); // c3 never got a result: turn 2 is closed for it
  await s.addItems([say("a3")]);
  const events = (await s.session.events()).filter((e) => e.type !== RECORD_TYPE);
  const brief = events.map((e) => {
    const d = e.data as { turn?: number; step?: number; message?: { toolCallId?: string; isError?: boolean }; reason?: { kind: string } };
    return [e.type, d.turn, d.step, d.message?.toolCallId ?? d.reason?.kind, d.message?.isError ? "error" : undefined].filter((x) => x !== undefined).join(" ");
  });
  assert.deepStrictEqual(brief, [
    "turn/start 1",
    "user/message",
    "step/start 1 1",
    "assistant/message 1 1",
    "tool/call 1 1",
    "tool/result 1 1 c2",
    "tool/call 1 1",
    "tool/result 1 1 c1",
    "step/end 1 1",
    "step/start 1 2",
    "assistant/message 1 2",
    "step/end 1 2",
    "turn/end 1 completed",
    "turn/start 2",
    "user/message",
    "step/start 2 1",
    "assistant/message 2 1",
    "tool/result 2 1 c3 error",
    "step/end 2 1",
    "turn/end 2 plugin:openai-agents",
    "turn/start 3",
    "user/message",
    "step/start 3 1",
    "assistant/message 3 1",
    "step/end 3 1",
    "turn/end 3 completed",
  ]);
  assert.deepStrictEqual(errors, []);
  assert.deepStrictEqual(await s.getItems(), [user("q1"), call("c1"), call("c2"), result("c2", "two"), result("c1", "one"), say("a1"), user("q2"), call("c3"), user("q3"), say("a3")]);
});

test("a compaction inside an open turn replaces the surface with a checkpoint; the turn goes on", async () => {
  const errors: unknown[] = [];
  const s = new LogbookSession({ client, key: `contract-${++n}`, onMirrorError: (e) => errors.push(e) });
  await s.addItems([{ role: "system", content: "be brief" }, user("q1"), say("a1"), user("q2"), call("c1")]);
  const kept: AgentInputItem[] = [{ type: "compaction", encrypted_content: "opaque" }, call("c1")];
  await s.replaceHistoryWithCompaction(kept);
  await s.addItems([result("c1", "r1"), say("a2")]);
  assert.deepStrictEqual(errors, []);
  assert.deepStrictEqual(await fresh(s.key).getItems(), [...kept, result("c1", "r1"), say("a2")]);
  const events = await s.session.events();
  const start = events.find((e) => e.type === "compaction/start")!;
  assert.deepStrictEqual((start.data as { turn: number }).turn, 2, "a bracket of the open turn");
  const surface = (await s.session.surface()).map((seq) => events[seq]!);
  assert.deepStrictEqual(
    surface.map((e) => e.type),
    ["system/message", "user/message", "tool/result", "assistant/message"],
    "the system prompt, the checkpoint, then what came after it",
  );
  assert.equal((surface[1]!.data as { source: { kind: string } }).source.kind, "compact-checkpoint");
  assert.ok((await s.session.transcript()).length >= 7, "the transcript keeps the replaced messages");
  assert.equal((await s.session.inspect()).openTurn, null);
});

test("reading a key never written creates nothing; the first write creates the session", async () => {
  const s = fresh();
  assert.deepStrictEqual(await s.getItems(), []);
  assert.equal(await s.popItem(), undefined);
  await s.clearSession();
  await rejects(s.session.info(), "SESSION_NOT_FOUND");
  const kept: AgentInputItem[] = [{ type: "compaction", encrypted_content: "first" }, say("hello")];
  await s.replaceHistoryWithCompaction(kept);
  assert.deepStrictEqual(await fresh(s.key).getItems(), kept);
  assert.equal((await s.session.info()).header.labels?.["framework"], "openai-agents");
});

// lossyProxy forwards requests to the server; the appends it is told to
// drop reach the server, but their answers are cut off, as when the
// connection breaks after the server committed.
async function lossyProxy(target: string): Promise<{ url: string; drop: number; close: () => Promise<void> }> {
  const p = { url: "", drop: 0, close: async () => {} };
  const srv: HTTPServer = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
    const up = await fetch(target + req.url, { method: req.method, headers, body: req.method === "GET" ? undefined : Buffer.concat(chunks) });
    const body = Buffer.from(await up.arrayBuffer());
    if (req.method === "POST" && /\/events/.test(req.url ?? "") && p.drop > 0) {
      p.drop--;
      res.socket?.destroy();
      return;
    }
    const back: Record<string, string> = {};
    up.headers.forEach((v, k) => {
      if (k === "content-type" || k.startsWith("logbook-")) back[k] = v;
    });
    res.writeHead(up.status, back);
    res.end(body);
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  p.url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  p.close = () => new Promise<void>((resolve) => srv.close(() => resolve()));
  return p;
}

test("a write whose answer was lost is retried without being stored twice", async () => {
  const proxy = await lossyProxy(server.url);
  try {
    const s = new LogbookSession({ client: new Client({ baseUrl: proxy.url }), key: `contract-${++n}`, backoffMs: 10 });
    await s.addItems([user("q1")]);
    proxy.drop = 1;
    await s.addItems([call("c1"), result("c1", "r1"), say("a1")]);
    proxy.drop = 1;
    await s.applyHistoryTransaction({ operationId: "op-lost", transaction: { type: "append_items", items: [user("q2")] } });
    proxy.drop = 1;
    await s.popItem();
    assert.equal(proxy.drop, 0, "each answer was dropped");
    const want = [user("q1"), call("c1"), result("c1", "r1"), say("a1")];
    assert.deepStrictEqual(await s.getItems(), want);
    assert.deepStrictEqual(await fresh(s.key).getItems(), want);
    const ops = (await s.session.events()).filter((e) => e.type === RECORD_TYPE).map((e) => (e.data as { op: string }).op);
    assert.deepStrictEqual(ops, ["add", "add", "transaction", "pop"]);
  } finally {
    await proxy.close();
  }
});
