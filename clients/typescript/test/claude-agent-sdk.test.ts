// The SessionStore of the Claude Agent SDK against a real `logbook serve`
// (see serve.ts): one test per contract the SDK's type docs of SessionStore
// state, each also run on the SDK's own InMemorySessionStore where the
// answer can be compared, plus the typed events and a restart of serve.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { InMemorySessionStore, type SessionKey, type SessionStore, type SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";

import { FRAMEWORK, LogbookSessionStore, sessionIdOf } from "../src/claude-agent-sdk/index.js";
import { Client, LogbookError } from "../src/index.js";
import { freeAddr, removeBin, Server } from "./serve.js";

const fixtureDir = new URL("../../test/testdata/claude-code/", import.meta.url);
const sessionUuid = "7f3c2a1e-5b4d-4c8e-9a10-2b3c4d5e6f70";

// transcript returns the hand-written Claude Code session of testdata.
function transcript(): SessionStoreEntry[] {
  return readFileSync(new URL(`${sessionUuid}.jsonl`, fixtureDir), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as SessionStoreEntry);
}

let srv: Server;
let lb: Client;
let n = 0;

before(async () => {
  srv = await Server.start();
  lb = new Client({ baseUrl: srv.url });
});

after(async () => {
  await srv?.stop();
  srv?.removeData();
  removeBin();
});

// fresh returns a store on the test server and a project key no other test uses.
function fresh(o: { flush?: boolean; onWarning?: (m: string) => void } = {}): { store: LogbookSessionStore; project: string } {
  n++;
  return { store: new LogbookSessionStore({ client: lb, ...o }), project: `-home-dev-src-project-${n}` };
}

// both runs fn on the logbook store and on the SDK's InMemorySessionStore
// and returns the two answers.
async function both<T>(fn: (s: SessionStore, project: string) => Promise<T>): Promise<{ logbook: T; memory: T }> {
  const { store, project } = fresh();
  return { logbook: await fn(store, project), memory: await fn(new InMemorySessionStore(), project) };
}

test("append keeps the call order, and load gives back lines deep-equal to those appended (as JSON round-trips them)", async () => {
  const lines = transcript();
  const odd: SessionStoreEntry[] = [
    { type: "custom-title", customTitle: "Ünïcode ✓ \u2028 and \"quotes\"", sessionId: sessionUuid },
    { type: "system", uuid: "odd-1", big: 2 ** 60, neg: -1e-7, exp: 1.5e300, nested: { a: [1, [2, [3, { b: null }]]], "": "" }, flag: true },
    { type: "system", uuid: "odd-2", ["__proto__"]: { polluted: true }, skipped: undefined, arr: [undefined, 1] } as unknown as SessionStoreEntry,
  ];
  const r = await both(async (s, project) => {
    const key = { projectKey: project, sessionId: sessionUuid };
    await s.append(key, lines.slice(0, 5));
    await s.append(key, odd);
    await s.append(key, lines.slice(5));
    return s.load(key);
  });
  const want = JSON.parse(JSON.stringify([...lines.slice(0, 5), ...odd, ...lines.slice(5)])) as SessionStoreEntry[];
  assert.deepStrictEqual(r.logbook, want);
  // The SDK's store keeps the objects themselves; as JSON they are the same.
  assert.deepStrictEqual(JSON.parse(JSON.stringify(r.memory)), r.logbook);
  assert.ok(Object.hasOwn(r.logbook![7]!, "__proto__"), "a member named __proto__ stays a member");
});

test("appends of one session issued without waiting are stored in call order", async () => {
  const { store, project } = fresh();
  const key = { projectKey: project, sessionId: "concurrent" };
  const lines = Array.from({ length: 40 }, (_, i) => ({ type: "progress", uuid: `p-${i}`, i }));
  await Promise.all(lines.map((l) => store.append(key, [l])));
  assert.deepStrictEqual(await store.load(key), lines);
});

test("a line with a uuid is stored once: a retried batch, an overlapping one, another store and a concurrent writer add nothing; lines without a uuid are appended again", async () => {
  const { store, project } = fresh();
  const key = { projectKey: project, sessionId: sessionUuid };
  const lines = transcript();
  await store.append(key, lines.slice(0, 8));
  await store.append(key, lines.slice(0, 8)); // the SDK's retry of the same batch
  await store.append(key, lines.slice(4)); // an overlapping batch
  // A second store (another process: nothing cached) and two at once.
  const other = new LogbookSessionStore({ client: lb });
  await Promise.all([other.append(key, lines), new LogbookSessionStore({ client: lb }).append(key, lines)]);
  const got = await store.load(key);
  const withUuid = lines.filter((l) => l.uuid);
  assert.deepStrictEqual(
    got!.filter((l) => l.uuid),
    withUuid,
    "each line with a uuid once, in its first order",
  );
  // The uuid-less lines (the snapshot, the summary) are not deduplicated, as
  // the SDK's docs say: the first batch, the overlap and the two full ones.
  const snapshots = got!.filter((l) => l.type === "file-history-snapshot").length;
  const summaries = got!.filter((l) => l.type === "summary").length;
  assert.equal(snapshots, 4);
  assert.equal(summaries, 3);
  // Nor did the typed events double: one user/message per prompt.
  const prompts = (await lb.session(sessionIdOf(key)).transcript()).filter((e) => e.type === "user/message");
  assert.equal(prompts.length, 2);

  // Two processes mirroring the same new session at once: each line is
  // stored by one and answered to the other as a replay of its operation id.
  const raced = { projectKey: project, sessionId: "raced" };
  await Promise.all([new LogbookSessionStore({ client: lb }).append(raced, lines), new LogbookSessionStore({ client: lb }).append(raced, lines)]);
  const both = (await store.load(raced))!;
  assert.deepStrictEqual(both.filter((l) => l.uuid), withUuid);
  assert.equal(both.length, withUuid.length + 2 * (lines.length - withUuid.length));
  const racedPrompts = (await lb.session(sessionIdOf(raced)).transcript()).filter((e) => e.type === "user/message");
  assert.equal(racedPrompts.length, 2);
});

test("unknown keys: load is null, listSessions, listSessionSummaries and listSubkeys are empty, delete resolves", async () => {
  const r = await both(async (s, project) => {
    const key = { projectKey: project, sessionId: "never-written" };
    await s.delete!(key);
    return [await s.load(key), await s.load({ ...key, subpath: "subagents/agent-x" }), await s.listSessions!(project), await s.listSessionSummaries!(project), await s.listSubkeys!(key)];
  });
  assert.deepStrictEqual(r.logbook, [null, null, [], [], []]);
  assert.deepStrictEqual(r.memory, r.logbook);
});

test("an empty append creates the session: load gives [] and listSessions names it, as in the SDK's InMemorySessionStore", async () => {
  const r = await both(async (s, project) => {
    const key = { projectKey: project, sessionId: "empty" };
    await s.append(key, []);
    return [await s.load(key), (await s.listSessions!(project)).map((e) => e.sessionId)];
  });
  assert.deepStrictEqual(r.logbook, [[], ["empty"]]);
  assert.deepStrictEqual(r.memory, r.logbook);
});

test("subpaths: each a child session of its main transcript, listed by listSubkeys, never by listSessions", async () => {
  const sub = (i: number): SessionStoreEntry[] => [{ type: "user", uuid: `sub-${i}`, isSidechain: true, message: { role: "user", content: `task ${i}` } }];
  const r = await both(async (s, project) => {
    const main = { projectKey: project, sessionId: "with-subagents" };
    await s.append(main, transcript().slice(0, 3));
    await s.append({ ...main, subpath: "subagents/agent-a1" }, sub(1));
    await s.append({ ...main, subpath: "subagents/workflows/run-7/agent-b2" }, sub(2));
    await s.append({ ...main, sessionId: "other" }, sub(3));
    return {
      subkeys: (await s.listSubkeys!(main)).sort(),
      sessions: (await s.listSessions!(project)).map((e) => e.sessionId).sort(),
      a1: await s.load({ ...main, subpath: "subagents/agent-a1" }),
      b2: await s.load({ ...main, subpath: "subagents/workflows/run-7/agent-b2" }),
      none: await s.listSubkeys!({ ...main, sessionId: "other" }),
    };
  });
  assert.deepStrictEqual(r.logbook, {
    subkeys: ["subagents/agent-a1", "subagents/workflows/run-7/agent-b2"],
    sessions: ["other", "with-subagents"],
    a1: sub(1),
    b2: sub(2),
    none: [],
  });
  assert.deepStrictEqual(r.memory, r.logbook);
});

test("the logbook side: lenient sessions labelled with the framework and the original key; a subpath's session names its parent; a fork is not listed", async () => {
  const { store, project } = fresh();
  const main: SessionKey = { projectKey: project, sessionId: sessionUuid };
  const child: SessionKey = { ...main, subpath: "subagents/agent-a1" };
  await store.append(main, transcript().slice(0, 2));
  await store.append(child, [{ type: "user", uuid: "c-1", message: { role: "user", content: "go" } }]);
  const m = await lb.session(sessionIdOf(main)).info();
  const c = await lb.session(sessionIdOf(child)).info();
  assert.equal(m.header.protocol, "lenient");
  assert.deepStrictEqual(m.header.labels, { framework: FRAMEWORK, project, session: sessionUuid });
  assert.deepStrictEqual(c.header.labels, { framework: FRAMEWORK, project, session: sessionUuid, subpath: "subagents/agent-a1" });
  assert.equal(c.header["parentSession"], sessionIdOf(main));
  const lineage = await lb.session(sessionIdOf(main)).lineage();
  assert.deepStrictEqual(lineage.children.map((x) => x.id), [sessionIdOf(child)]);
  // A fork inherits the labels under its own id: it is not the key's session.
  const fork = await lb.session(sessionIdOf(main)).fork({ as: `fork-of-${project}` });
  assert.deepStrictEqual(fork.header?.labels, m.header.labels);
  assert.deepStrictEqual(await store.listSessions(project).then((l) => l.map((e) => e.sessionId)), [sessionUuid]);
  assert.deepStrictEqual(await store.listSubkeys(main), ["subagents/agent-a1"]);
});

test("keys: a key that is a valid id is the id; a longer one is cut at 40 bytes with a hash; '/' in a part cannot make two keys collide; a bad key is refused naming the rule and creates nothing", async () => {
  assert.equal(sessionIdOf({ projectKey: "p", sessionId: "s" }), "p/s");
  assert.equal(sessionIdOf({ projectKey: "p", sessionId: "s", subpath: "subagents/agent-1" }), "p/s/subagents/agent-1");
  assert.notEqual(sessionIdOf({ projectKey: "a/b", sessionId: "c" }), sessionIdOf({ projectKey: "a", sessionId: "b/c" }));
  const long = { projectKey: "-home-dev-src-" + "x".repeat(200), sessionId: sessionUuid };
  const id = sessionIdOf(long);
  assert.match(id, /^-home-dev-src-x{26}-[0-9a-f]{16}$/);
  const { store } = fresh();
  await store.append(long, transcript().slice(0, 1));
  assert.deepStrictEqual((await lb.session(id).info()).header.labels?.["project"], long.projectKey);
  assert.deepStrictEqual((await store.listSessions(long.projectKey)).map((e) => e.sessionId), [sessionUuid]);
  const before = (await lb.list({ limit: 1000 })).sessions.length;
  await assert.rejects(store.append({ projectKey: "p", sessionId: "s", subpath: "" }, []), /subpath is empty/);
  await assert.rejects(store.append({ projectKey: "p\n", sessionId: "s" }, []), /projectKey holds a control character/);
  await assert.rejects(store.load({ projectKey: "p", sessionId: "s".repeat(1025) }), /sessionId is 1025 bytes; the session's labels keep at most 1024/);
  assert.equal((await lb.list({ limit: 1000 })).sessions.length, before);
});

test("a session of another framework under the same id is refused, unchanged", async () => {
  const { store, project } = fresh();
  const key = { projectKey: project, sessionId: "taken" };
  const foreign = await lb.create({ id: sessionIdOf(key), labels: { framework: "openai-agents", key: "x" } });
  await assert.rejects(store.append(key, transcript().slice(0, 2)), /its labels are not those of this key/);
  assert.equal((await foreign.info()).length, 0);
});

test("delete: a subpath alone; a main transcript with its subagents; a held session is kept (SESSION_HELD)", async () => {
  const r = await both(async (s, project) => {
    const main = { projectKey: project, sessionId: "doomed" };
    const e = [{ type: "user", uuid: "d-1", message: { role: "user", content: "hi" } }];
    await s.append(main, e);
    await s.append({ ...main, subpath: "subagents/agent-1" }, e);
    await s.append({ ...main, subpath: "subagents/agent-2" }, e);
    await s.append({ ...main, sessionId: "kept" }, e);
    await s.delete!({ ...main, subpath: "subagents/agent-1" });
    const afterSub = [await s.load({ ...main, subpath: "subagents/agent-1" }), await s.listSubkeys!(main), await s.load(main)];
    await s.delete!(main);
    return { afterSub, main: await s.load(main), sub2: await s.load({ ...main, subpath: "subagents/agent-2" }), sessions: (await s.listSessions!(project)).map((x) => x.sessionId) };
  });
  const e = [{ type: "user", uuid: "d-1", message: { role: "user", content: "hi" } }];
  assert.deepStrictEqual(r.logbook, { afterSub: [null, ["subagents/agent-2"], e], main: null, sub2: null, sessions: ["kept"] });
  assert.deepStrictEqual(r.memory, r.logbook);

  const { store, project } = fresh();
  const key = { projectKey: project, sessionId: "held" };
  await store.append(key, e);
  await lb.session(sessionIdOf(key)).hold({ reason: "litigation" });
  await assert.rejects(store.delete(key), (err: unknown) => err instanceof LogbookError && err.code === "SESSION_HELD");
  assert.deepStrictEqual(await store.load(key), e);
});

test("listSessions: an integer mtime from the server's clock that moves with each append; listSessionSummaries gives the SDK's own fold with the same mtime", async () => {
  // Flushed: the backend's time of the last write (lastActivity) settles
  // when the events are on disk, so two listings agree.
  const { store, project } = fresh({ flush: true });
  const key = { projectKey: project, sessionId: sessionUuid };
  const lines = transcript();
  const t0 = Date.now();
  await store.append(key, lines.slice(0, 6));
  const [first] = await store.listSessions(project);
  assert.ok(Number.isInteger(first!.mtime) && first!.mtime >= t0 - 1000, `mtime ${first!.mtime}`);
  await new Promise((r) => setTimeout(r, 5));
  await store.append(key, lines.slice(6));
  const [second] = await store.listSessions(project);
  assert.ok(second!.mtime > first!.mtime, `mtime ${second!.mtime} after ${first!.mtime}`);

  const others = Array.from({ length: 11 }, (_, i) => ({ projectKey: project, sessionId: `other-${i}` }));
  for (const [i, k] of others.entries()) await store.append(k, lines.slice(0, 1 + (i % 8)));
  const summaries = await store.listSessionSummaries(project);
  const mem = new InMemorySessionStore();
  await mem.append(key, lines.slice(0, 6));
  await mem.append(key, lines.slice(6));
  for (const [i, k] of others.entries()) await mem.append(k, lines.slice(0, 1 + (i % 8)));
  const want = await mem.listSessionSummaries(project);
  const mtimes = new Map((await store.listSessions(project)).map((e) => [e.sessionId, e.mtime]));
  const bySession = <T extends { sessionId: string }>(a: T[]) => [...a].sort((x, y) => x.sessionId.localeCompare(y.sessionId));
  assert.deepStrictEqual(bySession(summaries).map((e) => [e.sessionId, e.data]), bySession(want).map((e) => [e.sessionId, e.data]));
  assert.equal(summaries.find((e) => e.sessionId === sessionUuid)!.mtime, second!.mtime);
  assert.ok(summaries.every((e) => e.mtime === mtimes.get(e.sessionId)), "each summary's mtime is its session's listSessions mtime");
});

test("the lines' messages, tool calls and tool results are logbook's typed events: transcript, messages and the anthropic format read them", async () => {
  const { store, project } = fresh();
  const key = { projectKey: project, sessionId: sessionUuid };
  await store.append(key, transcript());
  const s = lb.session(sessionIdOf(key));
  const types = (await s.events()).filter((e) => e.type !== "claude-code/entry").map((e) => e.type);
  assert.deepStrictEqual(types, [
    "user/message",
    "assistant/message", // thinking
    "assistant/message", // text
    "assistant/message", // tool_use Read
    "tool/call",
    "tool/result",
    "assistant/message", // text and tool_use Write
    "tool/call",
    "tool/result",
    "assistant/message",
    "user/message",
    "assistant/message", // tool_use Bash
    "tool/call",
    "tool/result",
    "assistant/message",
  ]);
  const msgs = await s.messages();
  assert.deepStrictEqual(msgs.map((m) => m.role), ["user", "assistant", "assistant", "assistant", "tool", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
  assert.deepStrictEqual(msgs[0]!.content, [{ type: "text", text: "Add a unit test for parse_amount in invoice/utils.py; it must cover negative amounts." }]);
  assert.deepStrictEqual(msgs[1]!.content[0], { type: "reasoning", text: "I should read utils.py to see how parse_amount handles signs before writing the test.", signature: "EpQCCkYIBxgCKkDx1h2Zr7uVq0mTn4Lw==" });
  assert.deepStrictEqual(msgs[3]!.content, [{ type: "tool-call", id: "toolu_01Xb7VfP2qLr9sKd3mNc8TzA", name: "Read", arguments: '{"file_path":"/home/dev/src/invoice-parser/invoice/utils.py"}' }]);
  assert.equal(msgs[4]!.toolCallId, "toolu_01Xb7VfP2qLr9sKd3mNc8TzA");
  assert.match((msgs[4]!.content[0] as { text: string }).text, /def parse_amount/);
  assert.deepStrictEqual(msgs[3]!.source, { kind: "model", provider: "anthropic", model: "claude-sonnet-4-5-20250929" });
  // Steps follow the replies (message.id), turns the prompts.
  const steps = (await s.events()).filter((e) => e.type === "assistant/message").map((e) => e.data as { turn: number; step: number });
  assert.deepStrictEqual(steps.map((d) => [d.turn, d.step]), [[1, 1], [1, 1], [1, 1], [1, 2], [1, 3], [2, 1], [2, 2]]);
  const anthropic = (await s.messages({ format: "anthropic" })) as { role: string }[];
  assert.equal(anthropic[0]!.role, "user");
  assert.match(await s.messages({ format: "markdown" }), /All 3 tests pass\./);
});

test("a session whose state the store let go (maxCachedSessions) is read back from its log: the same typed events as a store that kept it", async () => {
  const { store: small, project } = fresh();
  const forgetful = new LogbookSessionStore({ client: lb, maxCachedSessions: 1 });
  const a = { projectKey: project, sessionId: "kept" };
  const b = { projectKey: project, sessionId: "forgotten" };
  const c = { projectKey: project, sessionId: "other" };
  for (const l of transcript()) {
    await small.append(a, [l]);
    await forgetful.append(b, [l]);
    await forgetful.append(c, [l]); // evicts b's state
  }
  const typed = async (k: SessionKey) => (await lb.session(sessionIdOf(k)).events()).map((e) => [e.type, e.dataText]);
  assert.deepStrictEqual(await typed(b), await typed(a));
  assert.deepStrictEqual(await forgetful.load(b), transcript());
});

test("parallel tool calls answered in one user line: a group per result (one surface event each), all under the line's uuid, none twice on a retry", async () => {
  const { store, project } = fresh();
  const key = { projectKey: project, sessionId: "parallel" };
  const lines: SessionStoreEntry[] = [
    { type: "user", uuid: "q", message: { role: "user", content: "read both" } },
    {
      type: "assistant",
      uuid: "r",
      message: { id: "msg_1", role: "assistant", model: "claude-opus-4-1", content: [{ type: "tool_use", id: "t1", name: "Read", input: { p: "a" } }, { type: "tool_use", id: "t2", name: "Read", input: { p: "b" } }] },
    },
    {
      type: "user",
      uuid: "res",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "B" }] }, { type: "tool_result", tool_use_id: "t1", content: "A", is_error: true }, { type: "text", text: "[Request interrupted by user]" }] },
    },
  ];
  await store.append(key, lines);
  await new LogbookSessionStore({ client: lb }).append(key, lines);
  const s = lb.session(sessionIdOf(key));
  const evs = await s.events();
  assert.deepStrictEqual(evs.map((e) => e.type), ["claude-code/entry", "user/message", "claude-code/entry", "assistant/message", "tool/call", "tool/call", "claude-code/entry", "tool/result", "tool/result", "user/message"]);
  const msgs = await s.messages();
  assert.deepStrictEqual(msgs.slice(2).map((m) => [m.role, m.toolCallId, m.isError, m.content]), [
    ["tool", "t2", undefined, [{ type: "text", text: "B" }]],
    ["tool", "t1", true, [{ type: "text", text: "A" }]],
    ["user", undefined, undefined, [{ type: "text", text: "[Request interrupted by user]" }]],
  ]);
  assert.equal((msgs[4]!.source as { kind: string }).kind, "context");
  assert.deepStrictEqual(await store.load(key), lines);
});

test("a line whose typed events logbook refuses is stored all the same, without them, and the store says so", async () => {
  const warnings: string[] = [];
  const { store, project } = fresh({ onWarning: (m) => warnings.push(m) });
  const key = { projectKey: project, sessionId: "bad-image" };
  const line = { type: "user", uuid: "img-1", message: { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "not base64!" } }] } };
  await store.append(key, [line]);
  await store.append(key, [line]); // the retry stores nothing more
  assert.deepStrictEqual(await store.load(key), [line]);
  assert.equal((await lb.session(sessionIdOf(key)).events()).length, 1);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /line img-1 were refused \(PAYLOAD_INVALID/);
});

test("a restart of serve between append and load: the lines come back deep-equal, and a retried append after it adds nothing", async () => {
  const addr = await freeAddr();
  let own = await Server.start({ addr });
  try {
    const client = new Client({ baseUrl: own.url });
    const key = { projectKey: "-home-dev-src-restart", sessionId: sessionUuid };
    const lines = transcript();
    await new LogbookSessionStore({ client }).append(key, lines);
    await own.stop();
    own = await Server.start({ addr, dataDir: own.dataDir });
    const store = new LogbookSessionStore({ client });
    assert.deepStrictEqual(await store.load(key), lines);
    await store.append(key, lines.filter((l) => l.uuid));
    assert.deepStrictEqual(await store.load(key), lines);
    // A flushed append whose answer is lost, then serve is SIGKILLed and
    // restarted: the SDK's retry of the batch is answered from the stored
    // operation id, and the line is there once.
    let lose = 1;
    const lossy = new Client({
      baseUrl: own.url,
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (lose > 0 && String(url).includes("/events/group")) {
          lose--;
          await res.arrayBuffer();
          throw new TypeError("fetch failed: the connection was reset");
        }
        return res;
      },
    });
    const durable = new LogbookSessionStore({ client: lossy, flush: true });
    const more = [{ type: "user", uuid: "after-kill", message: { role: "user", content: "one more" } }];
    await assert.rejects(durable.append(key, more), (e: unknown) => e instanceof LogbookError && e.code === "CONNECTION_FAILED");
    await own.kill();
    own = await Server.start({ addr, dataDir: own.dataDir });
    await durable.append(key, more);
    assert.deepStrictEqual(await new LogbookSessionStore({ client }).load(key), [...lines, ...more]);
    const prompts = (await client.session(sessionIdOf(key)).transcript()).filter((e) => e.type === "user/message");
    assert.equal(prompts.length, 3);
    // A flushed batch of several requests (the last one flushes them all)
    // survives a SIGKILL right after it.
    const batch = [{ type: "tag", tag: "wip" }, { type: "user", uuid: "b-1", message: { role: "user", content: "and again" } }, { type: "custom-title", customTitle: "t" }];
    await new LogbookSessionStore({ client, flush: true }).append(key, batch);
    await own.kill();
    own = await Server.start({ addr, dataDir: own.dataDir });
    assert.deepStrictEqual(await new LogbookSessionStore({ client }).load(key), [...lines, ...more, ...batch]);
  } finally {
    await own.stop();
    own.removeData();
  }
});
