// LogbookSaver under a real LangGraph StateGraph over MessagesAnnotation
// with a fake chat model that calls a tool, against real `logbook serve`
// processes (see serve.ts): a SIGKILL of serve in the middle of a run, a
// restart on the same data directory and a resume from the last
// checkpoint; the messages as typed events; retried puts and writes stored
// once; deleteThread under a legal hold; long thread ids.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { Client, LogbookError, type Event } from "../src/index.js";
import { sessionIdFor } from "../src/adapters/keys.js";
import { CHECKPOINT_TYPE, LogbookSaver, WRITES_TYPE } from "../src/langgraph/index.js";
import { freeAddr, removeBin, Server } from "./serve.js";

/** How many tool calls the fake model makes before it answers. */
const CALLS = 3;

/** FakeAdder is a chat model that adds 1 … CALLS with the tool "add": it
 * asks for one call per number, adding it to the last result, CALLS times
 * in a turn, then answers with the sum. Its reply depends on the messages only,
 * so a run resumed after a crash goes on as the first would have. */
class FakeAdder extends BaseChatModel {
  _llmType(): string {
    return "fake-adder";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const lastHuman = messages.map((m) => m.type).lastIndexOf("human");
    const turn = messages.filter((m) => m.type === "human").length;
    const results = messages.slice(lastHuman + 1).filter((m) => m.type === "tool");
    const sum = Number(results.at(-1)?.content ?? 0); // the running total: 1, 1+2, 1+2+3
    const reply =
      results.length < CALLS
        ? new AIMessage({
            content: "",
            tool_calls: [{ id: `call-${turn}-${results.length + 1}`, name: "add", args: { a: sum, b: results.length + 1 }, type: "tool_call" }],
            response_metadata: { model_provider: "fake", model_name: "adder-1" },
          })
        : new AIMessage({ content: `The sum is ${sum}.`, response_metadata: { model_provider: "fake", model_name: "adder-1" } });
    return { generations: [{ message: reply, text: typeof reply.content === "string" ? reply.content : "" }] };
  }
}

/** onAdd runs inside the tool, before it answers; a test sets it to kill serve. */
let onAdd: (a: number, b: number) => Promise<void> = async () => {};

const add = tool(
  async ({ a, b }: { a: number; b: number }) => {
    await onAdd(a, b);
    return String(a + b);
  },
  { name: "add", description: "adds two numbers", schema: z.object({ a: z.number(), b: z.number() }) },
);

function graph(saver: LogbookSaver) {
  const model = new FakeAdder({});
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([add]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });
}

let dataDir: string;

before(() => {
  dataDir = mkdtempSync(join(tmpdir(), "logbook-langgraph-"));
});

after(() => {
  rmSync(dataDir, { recursive: true, force: true });
  removeBin();
});

test("a tool-calling StateGraph killed with serve (SIGKILL) resumes from its last checkpoint after a restart; its messages are typed events", async () => {
  const addr = await freeAddr();
  let srv = await Server.start({ addr, dataDir });
  try {
    const thread = "graph-run-1";
    const config = { configurable: { thread_id: thread }, durability: "sync" as const };
    let saver = new LogbookSaver({ client: new Client({ baseUrl: srv.url }), flush: true });
    // Turn 1: serve dies while the second tool call runs.
    let adds = 0;
    onAdd = async () => {
      if (++adds === 2) await srv.kill();
    };
    await assert.rejects(graph(saver).invoke({ messages: [new HumanMessage("add up")] }, config), (e: unknown) => e instanceof LogbookError && e.code === "CONNECTION_FAILED");
    onAdd = async () => {};

    srv = await Server.start({ addr, dataDir });
    saver = new LogbookSaver({ client: new Client({ baseUrl: srv.url }), flush: true });
    const g = graph(saver);
    const before = await g.getState(config);
    const kept = before.values.messages as BaseMessage[];
    // The last checkpoint holds the second call, asked for and not answered.
    assert.deepEqual(kept.map((m) => m.type), ["human", "ai", "tool", "ai"]);
    assert.equal((kept[3] as AIMessage).tool_calls?.[0]?.id, "call-1-2");
    assert.deepEqual(before.next, ["tools"]);

    const done = await g.invoke(null, config);
    const msgs = done.messages as BaseMessage[];
    assert.deepEqual(msgs.map((m) => m.type), ["human", "ai", "tool", "ai", "tool", "ai", "tool", "ai"]);
    assert.deepEqual(msgs.slice(0, 4).map((m) => m.id), kept.map((m) => m.id), "the resumed run goes on from the kept messages");
    assert.equal(new Set(msgs.map((m) => m.id)).size, msgs.length, "no message twice");
    assert.equal(msgs[7]!.content, "The sum is 6.");

    // Turn 2, a new prompt on the same thread.
    const again = await g.invoke({ messages: [new HumanMessage("once more")] }, config);
    const all = again.messages as BaseMessage[];
    assert.equal(all.length, 16);

    // The messages as logbook derives them from the typed events: the same ids, in order.
    const session = saver.client.session(sessionIdFor(thread));
    const derived = await session.messages();
    assert.deepEqual(derived.map((m) => m.id), all.map((m) => m.id));
    assert.deepEqual(derived.map((m) => m.role), all.map((m) => ({ human: "user", ai: "assistant", tool: "tool" })[m.type as string]));
    assert.deepEqual(derived[1]!.content, [{ type: "tool-call", id: "call-1-1", name: "add", arguments: '{"a":0,"b":1}' }]);
    assert.deepEqual(derived[2]!.content, [{ type: "text", text: "1" }]);
    assert.deepEqual(derived[15]!.content, [{ type: "text", text: "The sum is 6." }]);
    const transcript = await session.transcript();
    assert.equal(transcript.length, 16);

    // The loop events: the crash closed turn 1 as interrupted, the resumed run is turn 2 (no prompt), the new prompt turn 3.
    const evs = await session.events();
    const ends = evs.filter((e) => e.type === "turn/end").map((e) => (e.data as { turn: number; reason: { kind: string } }));
    assert.deepEqual(ends.map((e) => [e.turn, e.reason.kind]), [[1, "interrupted"], [2, "completed"], [3, "completed"]]);
    assert.deepEqual(evs.filter((e) => e.type === "user/message").map((e) => (e.data as { id: string }).id), [all[0]!.id, all[8]!.id]);

    // Every checkpoint and write read back through a new saver is the one LangGraph holds.
    const fresh = new LogbookSaver({ client: new Client({ baseUrl: srv.url }) });
    const history = [];
    for await (const t of fresh.list({ configurable: { thread_id: thread } })) history.push(t);
    assert.equal(history.length, evs.filter((e) => e.type === CHECKPOINT_TYPE).length);
    const latest = await fresh.getTuple({ configurable: { thread_id: thread } });
    assert.deepEqual(latest?.checkpoint, history[0]!.checkpoint);
    assert.deepEqual((latest?.checkpoint.channel_values["messages"] as BaseMessage[]).map((m) => m.id), all.map((m) => m.id));
  } finally {
    await srv.stop();
  }
});

test("a retried put or putWrites is stored once (operation ids)", async () => {
  const srv = await Server.start();
  try {
    const saver = new LogbookSaver({ client: new Client({ baseUrl: srv.url }) });
    const cp = { ...emptyCheckpoint(), channel_values: { x: 1 }, channel_versions: { x: 1 } };
    const meta = { source: "input" as const, step: -1, parents: {} };
    const put = () => saver.put({ configurable: { thread_id: "retry" } }, cp, meta, { x: 1 });
    const cfg = await put();
    assert.deepEqual(await put(), cfg);
    // A second saver (another process) retrying the same put stores nothing either.
    const other = new LogbookSaver({ client: new Client({ baseUrl: srv.url }) });
    await other.put({ configurable: { thread_id: "retry" } }, cp, meta, { x: 1 });
    await saver.putWrites(cfg, [["x", 2]], "task-1", "path");
    await other.putWrites(cfg, [["x", 2]], "task-1", "path");
    const evs: Event[] = await saver.client.session("retry").events();
    assert.deepEqual(evs.map((e) => e.type), [CHECKPOINT_TYPE, WRITES_TYPE]);
    const t = await other.getTuple(cfg);
    assert.deepEqual(t?.checkpoint, cp);
    assert.deepEqual(t?.pendingWrites, [["task-1", "x", 2]]);
    // Pending writes come back in writesSortKey order (task path, task id, index), whatever the order of the calls.
    await saver.putWrites(cfg, [["y", "b0"], ["y", "b1"]], "task-0", "~b");
    await saver.putWrites(cfg, [["y", "a0"]], "task-9", "");
    await saver.putWrites(cfg, [["y", "late"]], "task-1", "path"); // index 0 of task-1 is taken: kept as first written
    assert.deepEqual((await other.getTuple(cfg))?.pendingWrites, [["task-9", "y", "a0"], ["task-1", "x", 2], ["task-0", "y", "b0"], ["task-0", "y", "b1"]]);
  } finally {
    await srv.stop();
    srv.removeData();
  }
});

test("deleteThread honours a legal hold: SESSION_HELD and nothing deleted, then deleted once released", async () => {
  const srv = await Server.start();
  try {
    const saver = new LogbookSaver({ client: new Client({ baseUrl: srv.url }) });
    const cfg = await saver.put({ configurable: { thread_id: "held" } }, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {});
    const s = saver.client.session("held");
    await s.release();
    await s.hold({ reason: "litigation" });
    await assert.rejects(saver.deleteThread("held"), (e: unknown) => e instanceof LogbookError && e.code === "SESSION_HELD");
    assert.notEqual(await saver.getTuple(cfg), undefined);
    await s.releaseHold({ reason: "settled" });
    await saver.deleteThread("held");
    assert.equal(await saver.getTuple(cfg), undefined);
    await saver.deleteThread("held"); // nothing left to delete
  } finally {
    await srv.stop();
    srv.removeData();
  }
});

test("a thread id that is no session id maps to a hashed one, keeps the original in the labels and lists under it", async () => {
  const srv = await Server.start();
  try {
    const saver = new LogbookSaver({ client: new Client({ baseUrl: srv.url }), scope: "app/eu" });
    const thread = "user 42/" + "x".repeat(100) + "\nend";
    await assert.rejects(saver.put({ configurable: { thread_id: thread } }, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {}), /control characters/);
    await assert.rejects(saver.put({ configurable: { thread_id: "half \ud800" } }, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {}), /lone surrogates/);
    const long = "user 42/" + "é".repeat(100);
    const cp = { ...emptyCheckpoint(), id: uuid6(-1) };
    await saver.put({ configurable: { thread_id: long } }, cp, { source: "input", step: -1, parents: {} }, {});
    const id = saver.sessionId(long);
    assert.equal(id, sessionIdFor(`app/eu/${long}`));
    const info = await (await saver.client.call("GET", `/v1/sessions/${encodeURIComponent(id)}`)).json();
    assert.deepEqual(info.header.labels, { framework: "langgraph", key: long, scope: "app/eu" });
    assert.deepEqual(await saver.threadIds(), [long]);
    const listed = [];
    for await (const t of saver.list({ configurable: {} })) listed.push(t.config.configurable?.["thread_id"]);
    assert.deepEqual(listed, [long]);
    // Another scope on the same server sees none of it, and cannot take its session.
    const unscoped = new LogbookSaver({ client: saver.client });
    assert.deepEqual(await unscoped.threadIds(), []);
    await assert.rejects(unscoped.getTuple({ configurable: { thread_id: id } }), /is not thread/);
    // Nor a session another application made under the thread's id: nothing written, nothing deleted.
    await saver.client.create({ id: "foreign" });
    await assert.rejects(unscoped.put({ configurable: { thread_id: "foreign" } }, emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {}), /is not thread "foreign"'s: its labels are \{\}/);
    await assert.rejects(unscoped.deleteThread("foreign"), /is not thread/);
    assert.equal((await saver.client.session("foreign").info()).length, 0);
  } finally {
    await srv.stop();
    srv.removeData();
  }
});

test("values logbook's JSON rules refuse (an integer beyond 2^53, a lone surrogate) are stored in base64 and read back equal", async () => {
  const srv = await Server.start();
  try {
    const saver = new LogbookSaver({ client: new Client({ baseUrl: srv.url }) });
    const values = { big: 2 ** 60, odd: "a\ud800b", plain: { n: 1.5, s: "é\n" } };
    const cp = { ...emptyCheckpoint(), channel_values: values, channel_versions: { big: 1, odd: 1, plain: 1 } };
    const cfg = await saver.put({ configurable: { thread_id: "b64" } }, cp, { source: "input", step: -1, parents: {} }, { big: 1, odd: 1, plain: 1 });
    await saver.putWrites(cfg, [["big", 2 ** 60 + 256]], "t");
    const [stored, writes] = await saver.client.session("b64").events();
    const blobs = (stored!.data as { blobs: { channel: string; value: Record<string, unknown> }[] }).blobs;
    assert.deepEqual(blobs.map((b) => [b.channel, Object.keys(b.value)]), [["big", ["type", "base64"]], ["odd", ["type", "base64"]], ["plain", ["type", "base64"]]]);
    assert.ok("base64" in (writes!.data as { writes: { value: object }[] }).writes[0]!.value);
    const t = await new LogbookSaver({ client: saver.client }).getTuple(cfg);
    assert.deepEqual(t?.checkpoint.channel_values, values);
    assert.deepEqual(t?.pendingWrites, [["t", "big", 2 ** 60 + 256]]);
    // What the rules take stays JSON, readable in the log.
    const cfg2 = await saver.put(cfg, { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { plain: { n: 2 } }, channel_versions: { plain: 2 } }, { source: "loop", step: 0, parents: {} }, { plain: 2 });
    const third = (await saver.client.session("b64").events({ from: 2 }))[0]!;
    assert.deepEqual((third.data as { blobs: unknown[] }).blobs, [{ channel: "plain", version: 2, value: { type: "json", json: { n: 2 } } }]);
    assert.deepEqual((await saver.getTuple(cfg2))?.checkpoint.channel_values, { plain: { n: 2 } });
  } finally {
    await srv.stop();
    srv.removeData();
  }
});
