// The Google ADK session service against real `logbook serve` processes
// (see serve.ts): ADK's own Runner with a fake model and a function tool,
// across a restart of serve, and the BaseSessionService contract beside
// ADK's InMemorySessionService.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  BaseLlm,
  createEvent,
  FunctionTool,
  InMemorySessionService,
  LlmAgent,
  Runner,
  type BaseSessionService,
  type Event as AdkEvent,
  type LlmRequest,
  type LlmResponse,
  type Session as AdkSession,
} from "@google/adk";
import { z } from "zod";

import { LogbookSessionService } from "../src/adk/index.js";
import { keyOf } from "../src/adk/service.js";
import { sessionIdFor } from "../src/adapters/keys.js";
import { Client, type Event } from "../src/index.js";
import { freeAddr, removeBin, Server } from "./serve.js";

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

// FakeLlm answers each call with the next reply of its script, a function
// of the request (so a reply can read the tool results before it).
class FakeLlm extends BaseLlm {
  readonly #script: ((req: LlmRequest) => LlmResponse)[];
  calls = 0;
  constructor(script: ((req: LlmRequest) => LlmResponse)[]) {
    super({ model: "fake-model-1" });
    this.#script = script;
  }
  async *generateContentAsync(req: LlmRequest): AsyncGenerator<LlmResponse, void> {
    const next = this.#script[this.calls++];
    if (!next) throw new Error(`FakeLlm: no reply scripted for call ${this.calls}`);
    yield next(req);
  }
  async connect(): Promise<never> {
    throw new Error("FakeLlm: no live mode");
  }
}

// lastResponses returns the function responses of the request's last content.
function lastResponses(req: LlmRequest): Record<string, unknown>[] {
  const parts = req.contents[req.contents.length - 1]?.parts ?? [];
  return parts.flatMap((p) => (p.functionResponse ? [p.functionResponse.response as Record<string, unknown>] : []));
}

const script: ((req: LlmRequest) => LlmResponse)[] = [
  // turn 1: one call, then the answer
  () => ({ content: { role: "model", parts: [{ text: "Adding." }, { functionCall: { id: "call-1", name: "add", args: { a: 2, b: 3 } } }] } }),
  (req) => ({ content: { role: "model", parts: [{ text: `The sum is ${lastResponses(req)[0]!["sum"]}.` }] }, usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 5 } }),
  // turn 2: two calls at once (one event with two responses), then the answer
  () => ({
    content: {
      role: "model",
      parts: [
        { text: "Two sums.", thought: true, thoughtSignature: "c2ln" },
        { functionCall: { id: "call-2", name: "add", args: { a: 10, b: 20 } } },
        { functionCall: { id: "call-3", name: "add", args: { a: 1.5, b: 2 } } },
      ],
    },
  }),
  (req) => ({ content: { role: "model", parts: [{ text: `Got ${lastResponses(req).map((r) => r["sum"]).join(" and ")}.` }] } }),
  // turn 3: a plain answer
  () => ({ content: { role: "model", parts: [{ text: "Bye." }] } }),
];

// runner builds an agent over a fresh FakeLlm from step `from` of the script.
function runner(service: BaseSessionService, from: number, app = "calc-app"): { runner: Runner; llm: FakeLlm } {
  const llm = new FakeLlm(script.slice(from));
  const add = new FunctionTool({
    name: "add",
    description: "Adds two numbers.",
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      const calls = (ctx!.state.get<number>("calls") ?? 0) + 1;
      ctx!.state.set("calls", calls);
      ctx!.state.set("user:total", (ctx!.state.get<number>("user:total") ?? 0) + a + b);
      ctx!.state.set("app:uses", (ctx!.state.get<number>("app:uses") ?? 0) + 1);
      ctx!.state.set("temp:scratch", { a, b });
      return { sum: a + b };
    },
  });
  const agent = new LlmAgent({ name: "calculator", model: llm, instruction: "Add numbers with the add tool.", tools: [add], outputKey: "last" });
  return { runner: new Runner({ appName: app, agent, sessionService: service }), llm };
}

// Recording keeps every event appendEvent stored, as it stands after the append.
class Recording extends LogbookSessionService {
  appended: AdkEvent[] = [];
  override async appendEvent(r: { session: AdkSession; event: AdkEvent }): Promise<AdkEvent> {
    const e = await super.appendEvent(r);
    if (!e.partial) this.appended.push(e);
    return e;
  }
}

async function turn(r: Runner, userId: string, sessionId: string, text: string, stateDelta?: Record<string, unknown>): Promise<AdkEvent[]> {
  const out: AdkEvent[] = [];
  for await (const e of r.runAsync({ userId, sessionId, newMessage: { role: "user", parts: [{ text }] }, ...(stateDelta ? { stateDelta } : {}) })) out.push(e);
  return out;
}

function logOf(client: Client, app: string, user: string, session: string) {
  return client.session(sessionIdFor(keyOf("session", app, user, session)));
}

test("ADK's Runner with a fake model and a function tool: history and state survive a restart of serve; typed events follow the loop", async () => {
  const addr = await freeAddr();
  let s1 = await Server.start({ addr });
  const mem = new InMemorySessionService();
  try {
    const svc = new Recording({ client: new Client({ baseUrl: s1.url }) });
    const initial = { greeting: "hi", "user:name": "Ann", "app:version": 1, "temp:boot": true };
    await svc.createSession({ appName: "calc-app", userId: "ann", sessionId: "s-1", state: initial });
    await mem.createSession({ appName: "calc-app", userId: "ann", sessionId: "s-1", state: initial });

    const first = runner(svc, 0);
    const memFirst = runner(mem, 0);
    const t1 = await turn(first.runner, "ann", "s-1", "Add 2 and 3.", { mood: "curious", "temp:trace": 1 });
    await turn(memFirst.runner, "ann", "s-1", "Add 2 and 3.", { mood: "curious", "temp:trace": 1 });
    assert.equal(first.llm.calls, 2);
    assert.equal(t1[t1.length - 1]!.content!.parts![0]!.text, "The sum is 5.");

    // serve goes away and comes back on the same data; a new service (as
    // after a restart of the agent) reads the history back.
    await s1.stop();
    s1 = await Server.start({ addr, dataDir: s1.dataDir });
    const svc2 = new Recording({ client: new Client({ baseUrl: s1.url }) });
    const back = await svc2.getSession({ appName: "calc-app", userId: "ann", sessionId: "s-1" });
    assert.ok(back);
    assert.deepStrictEqual(back.events, svc.appended);
    const memBack = await mem.getSession({ appName: "calc-app", userId: "ann", sessionId: "s-1" });
    assert.deepStrictEqual({ ...back.state }, { ...memBack!.state });
    assert.deepEqual(back.state, { greeting: "hi", "user:name": "Ann", "app:version": 1, mood: "curious", calls: 1, "user:total": 5, "app:uses": 1, last: "The sum is 5." });

    const second = runner(svc2, 2);
    const memSecond = runner(mem, 2);
    const t2 = await turn(second.runner, "ann", "s-1", "Add 10 and 20, and 1.5 and 2.");
    await turn(memSecond.runner, "ann", "s-1", "Add 10 and 20, and 1.5 and 2.");
    assert.equal(t2[t2.length - 1]!.content!.parts![0]!.text, "Got 30 and 3.5.");
    await turn(second.runner, "ann", "s-1", "Thanks.");
    await turn(memSecond.runner, "ann", "s-1", "Thanks.");

    const all = await new LogbookSessionService({ client: new Client({ baseUrl: s1.url }) }).getSession({ appName: "calc-app", userId: "ann", sessionId: "s-1" });
    assert.deepStrictEqual(all!.events, [...svc.appended, ...svc2.appended]);
    const memAll = await mem.getSession({ appName: "calc-app", userId: "ann", sessionId: "s-1" });
    assert.deepStrictEqual({ ...all!.state }, { ...memAll!.state });
    assert.equal(all!.state["calls"], 3);
    assert.equal(all!.state["user:total"], 38.5);
    assert.equal(all!.state["app:uses"], 3);
    assert.equal(all!.events.length, memAll!.events.length);

    // Another user of the app sees its app: state, not ann's user: state.
    const bob = await svc2.createSession({ appName: "calc-app", userId: "bob" });
    assert.deepStrictEqual(bob.state, { "app:version": 1, "app:uses": 3 });

    // The log: strict, no temp: key anywhere, the loop events in order.
    const log = logOf(new Client({ baseUrl: s1.url }), "calc-app", "ann", "s-1");
    const info = await log.info();
    assert.equal(info.header.protocol, undefined);
    assert.deepEqual(info.header.labels, { framework: "adk", "adk.kind": "session", "adk.app": "calc-app", "adk.user": "ann", "adk.session": "s-1", key: "calc-app/ann/s-1" });
    const evs = await log.events();
    assert.ok(!evs.some((e) => e.envelope.includes("temp:")), "a temp: key was stored");
    assert.deepEqual(
      evs.filter((e) => !e.type.startsWith("adk/")).map(loopLabel),
      [
        "turn/start 1", "user/message", "step/start 1", "assistant/message call-1", "tool/call call-1", "tool/result call-1", "step/end 1",
        "step/start 2", "assistant/message", "step/end 2", "turn/end 1",
        "session/end-seed", // the store's marker: the log was resumed after the restart
        "turn/start 2", "user/message", "step/start 1", "assistant/message call-2 call-3", "tool/call call-2", "tool/call call-3",
        "tool/result call-2", "tool/result call-3", "step/end 1", "step/start 2", "assistant/message", "step/end 2", "turn/end 2",
        "turn/start 3", "user/message", "step/start 1", "assistant/message", "step/end 1", "turn/end 3",
      ],
    );
    const messages = await log.messages();
    assert.deepEqual(
      messages.map((m) => `${m.role}: ${m.content.map((b) => (b.type === "text" || b.type === "reasoning" ? b.text : b.type === "tool-call" ? `${b.name}(${b.arguments})` : b.type)).join(" | ")}`),
      [
        "user: Add 2 and 3.",
        'assistant: Adding. | add({"a":2,"b":3})',
        'tool: {"sum":5}',
        "assistant: The sum is 5.",
        "user: Add 10 and 20, and 1.5 and 2.",
        'assistant: Two sums. | add({"a":10,"b":20}) | add({"a":1.5,"b":2})',
        'tool: {"sum":30}',
        'tool: {"sum":3.5}',
        "assistant: Got 30 and 3.5.",
        "user: Thanks.",
        "assistant: Bye.",
      ],
    );
  } finally {
    await s1.stop();
    s1.removeData();
  }
});

function loopLabel(e: Event): string {
  const d = e.data as { turn?: number; step?: number; message?: { content: { type: string; id?: string }[]; toolCallId?: string }; callId?: string };
  switch (e.type) {
    case "turn/start":
    case "turn/end":
      return `${e.type} ${d.turn}`;
    case "step/start":
    case "step/end":
      return `${e.type} ${d.step}`;
    case "assistant/message":
      return [e.type, ...d.message!.content.filter((b) => b.type === "tool-call").map((b) => b.id)].join(" ");
    case "tool/call":
      return `${e.type} ${d.callId}`;
    case "tool/result":
      return `${e.type} ${d.message!.toolCallId}`;
  }
  return e.type;
}

test("listSessions pages and orders as ADK's InMemorySessionService", async () => {
  const svc = new LogbookSessionService({ client: lb });
  const mem = new InMemorySessionService();
  for (const [user, sid] of [["u1", "a"], ["u1", "b"], ["u2", "c"], ["u1", "d"], ["u1", "e/slash"], ["u2", "f".repeat(100)], ["u1", "g"]] as const) {
    await svc.createSession({ appName: "pages", userId: user, sessionId: sid });
    await mem.createSession({ appName: "pages", userId: user, sessionId: sid });
    await new Promise((r) => setTimeout(r, 3)); // distinct update times
  }
  await svc.createSession({ appName: "pages-other", userId: "u1", sessionId: "z" });
  const shape = (r: { sessions: AdkSession[]; page: number; limit: number; totalItems: number; totalPages: number }) => ({
    ids: r.sessions.map((s) => `${s.userId}/${s.id}`),
    page: r.page,
    limit: r.limit,
    totalItems: r.totalItems,
    totalPages: r.totalPages,
  });
  const requests = [
    { appName: "pages", order: "asc" as const },
    { appName: "pages", order: "desc" as const },
    { appName: "pages", userId: "u1", order: "asc" as const },
    { appName: "pages", userId: "u1", order: "asc" as const, limit: 2 },
    { appName: "pages", userId: "u1", order: "asc" as const, limit: 2, page: 3 },
    { appName: "pages", userId: "u1", order: "desc" as const, limit: 2, offset: 3 },
    { appName: "pages", order: "asc" as const, offset: 5 },
    { appName: "pages", userId: "nobody", limit: 3, page: 2 },
    { appName: "no-such-app" },
  ];
  for (const req of requests) {
    assert.deepEqual(shape(await svc.listSessions(req)), shape(await mem.listSessions(req)), JSON.stringify(req));
  }
  const one = (await svc.listSessions({ appName: "pages", userId: "u1", order: "desc", limit: 1 })).sessions[0]!;
  assert.deepEqual({ ...one, lastUpdateTime: 0 }, { id: "g", appName: "pages", userId: "u1", state: {}, events: [], lastUpdateTime: 0 });
  assert.ok(one.lastUpdateTime > 0);
  // A key longer than a session id is kept whole in the labels of its hashed id.
  const long = logOf(lb, "pages", "u2", "f".repeat(100));
  assert.match(long.id, /^pages\/u2\/f{31}-[0-9a-f]{16}$/);
  assert.equal((await long.info()).header.labels?.["adk.session"], "f".repeat(100));
});

test("getSession selects events by numRecentEvents and afterTimestamp as ADK's InMemorySessionService", async () => {
  const svc = new Recording({ client: lb });
  const mem = new InMemorySessionService();
  const key = { appName: "recent", userId: "u", sessionId: "s" };
  const a = await svc.createSession(key);
  const m = await mem.createSession(key);
  for (let i = 0; i < 6; i++) {
    const e = () => createEvent({ id: `e${i}`, invocationId: `inv-${i}`, author: i % 2 ? "assistant" : "user", timestamp: 1000 + 10 * i, content: { role: i % 2 ? "model" : "user", parts: [{ text: `message ${i}` }] } });
    await svc.appendEvent({ session: a, event: e() });
    await mem.appendEvent({ session: m, event: e() });
  }
  for (const config of [undefined, {}, { numRecentEvents: 2 }, { numRecentEvents: 0 }, { numRecentEvents: 9 }, { afterTimestamp: 1020 }, { afterTimestamp: 1021 }, { afterTimestamp: 999 }, { afterTimestamp: 5000 }, { numRecentEvents: 4, afterTimestamp: 1030 }]) {
    const got = await svc.getSession({ ...key, ...(config ? { config } : {}) });
    const want = await mem.getSession({ ...key, ...(config ? { config } : {}) });
    const ids = want!.events.map((e) => e.id);
    assert.deepEqual(got!.events.map((e) => e.id), ids, JSON.stringify(config));
    // ADK's in-memory copies lose the null prototype of a trimmed state
    // delta; the logbook service gives back the events as appended.
    assert.deepStrictEqual(got!.events, svc.appended.filter((e) => ids.includes(e.id)), JSON.stringify(config));
  }
  assert.equal(await svc.getSession({ ...key, sessionId: "missing" }), undefined);
  assert.equal(await svc.getSession({ ...key, userId: "someone-else" }), undefined);
});

test("deleteSession deletes the log; app and user state stay; deleting again is no error", async () => {
  const svc = new LogbookSessionService({ client: lb });
  const key = { appName: "del", userId: "u", sessionId: "gone" };
  const s = await svc.createSession({ ...key, state: { "app:flag": "on", "user:pref": "dark", local: 1 } });
  await svc.appendEvent({ session: s, event: createEvent({ author: "user", content: { role: "user", parts: [{ text: "hello" }] } }) });
  await svc.deleteSession(key);
  assert.equal(await svc.getSession(key), undefined);
  assert.equal(await new LogbookSessionService({ client: lb }).getSession(key), undefined);
  assert.deepEqual((await svc.listSessions({ appName: "del" })).sessions, []);
  await assert.rejects(logOf(lb, "del", "u", "gone").info(), /SESSION_NOT_FOUND/);
  await svc.deleteSession(key);
  const again = await svc.createSession(key);
  assert.deepStrictEqual(again.state, { "app:flag": "on", "user:pref": "dark" });
  assert.deepStrictEqual(again.events, []);
});

test("bad input changes nothing: an existing session, names that are no label values, an event JSON cannot hold", async () => {
  const svc = new LogbookSessionService({ client: lb });
  await svc.createSession({ appName: "dup", userId: "u", sessionId: "s", state: { k: 1 } });
  await assert.rejects(svc.createSession({ appName: "dup", userId: "u", sessionId: "s", state: { k: 2, "app:x": 1 } }), /already exists/);
  assert.deepStrictEqual((await svc.getSession({ appName: "dup", userId: "u", sessionId: "s" }))!.state, { k: 1 });
  await assert.rejects(svc.createSession({ appName: "dup", userId: "bad\nuser" }), (e: unknown) => e instanceof TypeError && /control characters/.test(e.message));
  assert.equal((await svc.listSessions({ appName: "dup" })).totalItems, 1);

  const session = (await svc.getSession({ appName: "dup", userId: "u", sessionId: "s" }))!;
  const log = logOf(lb, "dup", "u", "s");
  const length = (await log.events()).length;
  const bad = createEvent({ author: "agent", content: { role: "model", parts: [{ functionCall: { id: "c1", name: "f", args: { x: NaN } } }] } });
  await assert.rejects(svc.appendEvent({ session, event: bad }), (e: unknown) => e instanceof TypeError && /event\.content\.parts\[0\]\.functionCall\.args\.x is NaN/.test(e.message));
  assert.equal((await log.events()).length, length);
  assert.deepStrictEqual(session.events, []);
  assert.deepStrictEqual(session.state, { k: 1 });
});

test("a retried appendEvent stores nothing twice: lost answers, a second service, and a concurrent double", async () => {
  let drop = 0;
  let replays = 0;
  const lossy = new Client({
    baseUrl: srv.url,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (res.headers.get("Logbook-Replay") === "true") replays++;
      if (drop > 0 && String(url).includes("/events/group")) {
        drop--;
        throw new TypeError("the connection broke after the server answered");
      }
      return res;
    },
  });
  const svc = new LogbookSessionService({ client: lossy });
  const key = { appName: "retry", userId: "u", sessionId: "s" };
  const session = await svc.createSession(key);
  const user = createEvent({ id: "ev-user", author: "user", invocationId: "i1", content: { role: "user", parts: [{ text: "call two tools" }] } });
  const call = createEvent({
    id: "ev-call",
    author: "agent",
    invocationId: "i1",
    content: { role: "model", parts: [{ functionCall: { id: "c1", name: "f", args: {} } }, { functionCall: { id: "c2", name: "g", args: { x: [1, 2] } } }] },
  });
  const answers = createEvent({
    id: "ev-answers",
    author: "agent",
    invocationId: "i1",
    content: { role: "user", parts: [{ functionResponse: { id: "c1", name: "f", response: { ok: 1 } } }, { functionResponse: { id: "c2", name: "g", response: { ok: 2 ** 60 } } }] },
  });
  drop = 1;
  await svc.appendEvent({ session, event: user });
  drop = 1;
  await svc.appendEvent({ session, event: call });
  drop = 2; // the append and its first retry lose their answers
  await svc.appendEvent({ session, event: answers });
  // Each lost answer was retried under the same operation id: a replay.
  assert.equal(replays, 4);
  const log = logOf(lb, "retry", "u", "s");
  const before = await log.events();
  // The same events again: through the same service, a new one, and two at once.
  await svc.appendEvent({ session, event: answers });
  await new LogbookSessionService({ client: lb }).appendEvent({ session, event: call });
  await Promise.all([new LogbookSessionService({ client: lb }).appendEvent({ session, event: user }), svc.appendEvent({ session, event: user })]);
  assert.equal((await log.events()).length, before.length);
  assert.deepEqual(
    before.filter((e) => e.type === "adk/event").map((e) => (e.data as { event: { id: string } }).event.id),
    ["ev-user", "ev-call", "ev-answers"],
  );
  assert.equal(before.filter((e) => e.type === "tool/result").length, 2);
  const got = await new LogbookSessionService({ client: lb }).getSession(key);
  assert.deepStrictEqual(got!.events, [user, call, answers]);

  // A new event appended by two services at once (same plan, same
  // operation id): one of them appends, the other's is a replay.
  const reply = createEvent({ id: "ev-reply", author: "agent", invocationId: "i1", content: { role: "model", parts: [{ text: "done" }] } });
  const [x, y] = [new LogbookSessionService({ client: lb }), new LogbookSessionService({ client: lb })];
  await Promise.all([x.getSession(key), y.getSession(key)]);
  await Promise.all([x.appendEvent({ session, event: reply }), y.appendEvent({ session, event: reply })]);
  const withReply = await log.events();
  assert.deepEqual(withReply.slice(before.length).map((e) => e.type), ["step/start", "assistant/message", "step/end", "turn/end", "adk/event"]);

  // The same id with other content is ADK's upsert: stored once more, read in place.
  const edited = { ...call, content: { role: "model", parts: [{ text: "edited" }] } } as AdkEvent;
  await svc.appendEvent({ session, event: edited });
  await svc.appendEvent({ session, event: edited });
  assert.equal((await log.events()).length, withReply.length + 1);
  assert.deepStrictEqual((await new LogbookSessionService({ client: lb }).getSession(key))!.events, [user, edited, answers, reply]);
});

test("with flush, an appended event survives a SIGKILL of serve; the turn the kill cut is closed and the next reply starts a new one", async () => {
  const addr = await freeAddr();
  let s = await Server.start({ addr });
  try {
    const key = { appName: "kill", userId: "u", sessionId: "s" };
    const svc = new LogbookSessionService({ client: new Client({ baseUrl: s.url }), flush: true });
    const session = await svc.createSession(key);
    const question = createEvent({ id: "q", author: "user", invocationId: "i1", content: { role: "user", parts: [{ text: "Still there?" }] }, actions: { stateDelta: { asked: true } } });
    await svc.appendEvent({ session, event: question });
    await s.kill();
    s = await Server.start({ addr, dataDir: s.dataDir });
    const svc2 = new LogbookSessionService({ client: new Client({ baseUrl: s.url }), flush: true });
    const back = (await svc2.getSession(key))!;
    assert.deepStrictEqual(back.events, [question]);
    assert.deepStrictEqual(back.state, { asked: true });
    const reply = createEvent({ id: "r", author: "agent", invocationId: "i1", content: { role: "model", parts: [{ text: "Yes." }] } });
    await svc2.appendEvent({ session: back, event: reply });
    assert.deepStrictEqual((await svc2.getSession(key))!.events, [question, reply]);
    const evs = await logOf(new Client({ baseUrl: s.url }), "kill", "u", "s").events();
    assert.deepEqual(
      evs.filter((e) => !e.type.startsWith("adk/")).map((e) => (e.type === "turn/end" ? `turn/end ${(e.data as { reason: { kind: string } }).reason.kind}` : loopLabel(e))),
      ["turn/start 1", "user/message", "turn/end interrupted", "session/end-seed", "turn/start 2", "step/start 1", "assistant/message", "step/end 1", "turn/end completed"],
    );
  } finally {
    await s.stop();
    s.removeData();
  }
});

test("calls the session moves on from get an error result; a response to a call of an earlier step is kept in the record only", async () => {
  const svc = new LogbookSessionService({ client: lb });
  const key = { appName: "unanswered", userId: "u", sessionId: "s" };
  const session = await svc.createSession(key);
  const said = (id: string, text: string) => createEvent({ id, author: "user", invocationId: id, content: { role: "user", parts: [{ text }] } });
  const calls = createEvent({ id: "m1", author: "agent", invocationId: "q1", content: { role: "model", parts: [{ functionCall: { id: "c1", name: "slow", args: {} } }] }, longRunningToolIds: ["c1"] });
  const late = createEvent({ id: "late", author: "user", invocationId: "q2", content: { role: "user", parts: [{ functionResponse: { id: "c1", name: "slow", response: { done: true } } }] } });
  const appended = [said("q1", "Start the slow job."), calls, said("q2", "Never mind."), late];
  for (const event of appended) await svc.appendEvent({ session, event });
  assert.deepStrictEqual((await new LogbookSessionService({ client: lb }).getSession(key))!.events, appended);
  const log = logOf(lb, "unanswered", "u", "s");
  assert.deepEqual(
    (await log.events()).map(loopLabel),
    ["turn/start 1", "user/message", "adk/event", "step/start 1", "assistant/message c1", "tool/call c1", "adk/event",
      "tool/result c1", "step/end 1", "turn/end 1", "turn/start 2", "user/message", "adk/event", "adk/event"],
  );
  const tool = (await log.messages()).find((m) => m.role === "tool")!;
  assert.equal(tool.isError, true);
  assert.equal(tool.toolCallId, "c1");
});
