// The OpenAI Agents SDK's own run() over a LogbookSession, against a real
// `logbook serve`: twelve turns with function tools, streamed and not, a
// compaction, and two SIGKILLs of serve in the middle of a turn, each
// followed by a restart on the same data directory and further runs: one
// while the log's turn waits for a tool approval, one while a run is
// between its model calls. The history must match the SDK's MemorySession
// fed the same calls, item for item: nothing lost, nothing twice.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Agent, MemorySession, run, setTracingDisabled, tool, Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse, type Session, type StreamEvent } from "@openai/agents-core";
import { z } from "zod";
import { Client } from "../src/index.js";
import { LogbookSession, RECORD_TYPE } from "../src/openai-agents/index.js";
import { freeAddr, removeBin, Server } from "./serve.js";

setTracingDisabled(true);

// Tee is the session run() gets: every call goes to the LogbookSession,
// then (when it succeeded) to a MemorySession, the SDK's reference.
class Tee implements Session {
  constructor(
    readonly lb: LogbookSession,
    readonly mem: MemorySession,
  ) {}
  getSessionId(): Promise<string> {
    return this.lb.getSessionId();
  }
  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.lb.getItems(limit);
  }
  async addItems(items: AgentInputItem[]): Promise<void> {
    await this.lb.addItems(items);
    await this.mem.addItems(items);
  }
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    await this.lb.replaceHistoryWithCompaction(items);
    await this.mem.clearSession();
    await this.mem.addItems(items);
  }
  async popItem(): Promise<AgentInputItem | undefined> {
    const got = await this.lb.popItem();
    await this.mem.popItem();
    return got;
  }
  async clearSession(): Promise<void> {
    await this.lb.clearSession();
    await this.mem.clearSession();
  }
}

const usage = () => new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });

// ScriptedModel answers a prompt "turn N" with two parallel calls (add and
// mul of N and 2) and a reasoning item, then, once the results are in,
// with a final message; the prompt "compact" gets a compaction item and a
// message. onCall runs before each answer (the test kills serve there).
class ScriptedModel implements Model {
  calls = 0;
  onCall: ((n: number) => Promise<void>) | undefined;

  async getResponse(req: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    await this.onCall?.(this.calls);
    const input = req.input as AgentInputItem[];
    const last = input[input.length - 1]!;
    const prompt = [...input].reverse().find((i) => (i as { role?: string }).role === "user") as { content: string } | undefined;
    const text = typeof prompt?.content === "string" ? prompt.content : "";
    const id = `resp-${this.calls}`;
    if (last.type === "function_call_result") {
      const results = input.filter((i) => i.type === "function_call_result").slice(-2);
      const said = results.map((r) => (r as { output: { text: string } }).output.text).join(" and ");
      return { usage: usage(), responseId: id, output: [{ type: "message", role: "assistant", status: "completed", id: `msg-${this.calls}`, content: [{ type: "output_text", text: `${text}: ${said}` }] }] };
    }
    if (text === "compact") {
      return {
        usage: usage(),
        responseId: id,
        output: [
          { type: "compaction", encrypted_content: `opaque-${this.calls}` },
          { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "compacted" }] },
        ],
      };
    }
    const n = Number(/turn (\d+)/.exec(text)?.[1] ?? 0);
    return {
      usage: usage(),
      responseId: id,
      output: [
        { type: "reasoning", content: [{ type: "input_text", text: `use both tools for ${n}` }] },
        { type: "function_call", callId: `add-${n}`, name: "add", arguments: JSON.stringify({ a: n, b: 2 }), status: "completed" },
        { type: "function_call", callId: `mul-${n}`, name: "mul", arguments: JSON.stringify({ a: n, b: 2 }), status: "completed" },
      ],
    };
  }

  async *getStreamedResponse(req: ModelRequest): AsyncIterable<StreamEvent> {
    const r = await this.getResponse(req);
    yield { type: "response_done", response: { id: r.responseId!, usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, output: r.output } } as StreamEvent;
  }
}

const add = tool({ name: "add", description: "a + b", parameters: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => String(a + b) });
// mul of 9 waits for a person's approval: the run stops with the call
// open, and a later run() resumes it.
const mul = tool({
  name: "mul",
  description: "a × b",
  parameters: z.object({ a: z.number(), b: z.number() }),
  needsApproval: async (_ctx, { a }) => a === 9,
  execute: async ({ a, b }) => String(a * b),
});

let server: Server;
let addr: string;

before(async () => {
  addr = await freeAddr();
  server = await Server.start({ addr });
});

after(async () => {
  await server.stop();
  server.removeData();
  removeBin();
});

test("run() over twelve turns, a compaction and a SIGKILL of serve keeps the SDK's history exactly", async () => {
  const client = new Client({ baseUrl: `http://${addr}` });
  const key = "openai-agents/run/" + "k".repeat(80); // longer than a session id: mapped, kept in the labels
  const mirrorErrors: unknown[] = [];
  const lb = new LogbookSession({ client, key, maxAttempts: 200, backoffMs: 50, onMirrorError: (e) => mirrorErrors.push(e) });
  const tee = new Tee(lb, new MemorySession({ sessionId: key }));
  const model = new ScriptedModel();
  const agent = new Agent({ name: "calc", instructions: "Use the tools.", model, tools: [add, mul] });

  for (let turn = 1; turn <= 12; turn++) {
    const prompt = turn === 6 ? "compact" : `turn ${turn}`;
    const stream = turn % 3 === 0;
    let restarted: Promise<Server> | undefined;
    if (turn === 10) {
      // Kill serve at the turn's second model call: the run's write meets
      // no server until the restart, and the adapter's retries carry it
      // over without writing anything twice.
      const killAt = model.calls + 2;
      model.onCall = async (n) => {
        if (n !== killAt) return;
        await server.kill();
        restarted = new Promise((resolve) => setTimeout(resolve, 300)).then(() => Server.start({ addr, dataDir: server.dataDir }));
      };
    }
    const before = model.calls;
    let r = stream ? await run(agent, prompt, { session: tee, stream: true }) : await run(agent, prompt, { session: tee });
    if (stream) await (r as { completed: Promise<void> }).completed;
    if (turn === 9) {
      // The run stopped for an approval with its step open in the log:
      // SIGKILL serve there, restart it on the same data directory (its
      // resume closes turn 9 as interrupted), and resume the run.
      assert.equal(r.interruptions.length, 1);
      assert.equal(((await lb.session.inspect()).openTurn), 9, "the log ends inside turn 9");
      await server.kill();
      server = await Server.start({ addr, dataDir: server.dataDir });
      r.state.approve(r.interruptions[0]!);
      r = await run(agent, r.state, { session: tee });
    }
    assert.ok(r.finalOutput, `turn ${turn} ends with a final output`);
    if (turn === 10) {
      assert.ok(restarted, "serve was killed during turn 10");
      server = await restarted;
      model.onCall = undefined;
    }
    assert.ok(model.calls > before);
  }

  // A fresh adapter (another process, say) reads the same history as the
  // SDK's MemorySession holds: nothing lost, nothing twice.
  const fresh = new LogbookSession({ client, key });
  const got = await fresh.getItems();
  const want = await tee.mem.getItems();
  assert.deepStrictEqual(got, want);
  assert.deepStrictEqual(await fresh.getItems(3), want.slice(-3));
  assert.equal(got[0]!.type, "compaction", "the compaction of turn 6 starts the history");
  const callIds = got.filter((i) => i.type === "function_call").map((i) => (i as { callId: string }).callId);
  const resultIds = got.filter((i) => i.type === "function_call_result").map((i) => (i as { callId: string }).callId);
  assert.deepStrictEqual(callIds, ["add-7", "mul-7", "add-8", "mul-8", "add-9", "mul-9", "add-10", "mul-10", "add-11", "mul-11", "add-12", "mul-12"]);
  assert.deepStrictEqual(resultIds, callIds);
  assert.deepStrictEqual(mirrorErrors, []);

  // The header keeps the framework and the original key.
  const info = await lb.session.info();
  assert.notEqual(lb.session.id, key);
  assert.deepStrictEqual(info.header.labels, { framework: "openai-agents", key });

  // The typed events: every prompt and every tool result is in the
  // transcript, the compaction put a checkpoint on the surface, and the
  // provider formats render the session (no call without its result).
  const events = await lb.session.events();
  if (process.env["DUMP"]) for (const e of events) console.log(e.seq, e.type, e.type === RECORD_TYPE ? JSON.stringify(e.data).slice(0, 150) : e.dataText.slice(0, 150));
  const transcript = await lb.session.transcript();
  const texts = transcript.map((t) => t.message.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
  for (let turn = 1; turn <= 12; turn++) {
    if (turn === 6) continue;
    assert.ok(texts.includes(`turn ${turn}`), `the prompt of turn ${turn} is in the transcript`);
    assert.ok(texts.includes(`turn ${turn}: ${turn + 2} and ${turn * 2}`), `the answer of turn ${turn} is in the transcript`);
  }
  // mul-9 is the exception: the restart closed turn 9 as interrupted with
  // an error result for it (docs/format.md, crash repair), so its real
  // result, which came after, is in the adapter's record only.
  const results = transcript.filter((t) => t.type === "tool/result");
  assert.equal(results.filter((t) => !t.message.isError).length, 21, "two results for each of the eleven turns with calls, but mul-9");
  assert.deepStrictEqual(
    results.filter((t) => t.message.isError).map((t) => t.message.toolCallId),
    ["mul-9"],
  );
  assert.ok(events.some((e) => e.type === "turn/end" && (e.data as { reason: { kind: string } }).reason.kind === "interrupted"));
  assert.ok(events.some((e) => e.type === "compaction/summary"));
  const surface = await lb.session.surface();
  const first = events[surface[0]!]!;
  assert.equal(first.type, "user/message");
  assert.equal((first.data as { source: { kind: string } }).source.kind, "compact-checkpoint");
  const openai = (await lb.session.messages({ format: "openai" })) as { role: string }[];
  assert.ok(openai.length > 0);
  const turnStarts = events.filter((e) => e.type === "turn/start").length;
  const turnEnds = events.filter((e) => e.type === "turn/end").length;
  assert.equal(turnStarts, turnEnds, "every turn is closed");
});
