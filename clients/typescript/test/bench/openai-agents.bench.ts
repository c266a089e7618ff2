// The latency of LogbookSession.addItems, the write run() makes once per
// turn, over a loopback `logbook serve`, with and without flush, beside the
// SDK's MemorySession. Each call adds one turn's items: a user message, a
// function call, its result and the final message. Run it after the
// build: node <build dir>/test/bench/openai-agents.bench.js [iterations]
// (LOGBOOK_TEST_BIN names the logbook binary; else it is built).

import { MemorySession, type AgentInputItem, type Session } from "@openai/agents-core";
import { Client } from "../../src/index.js";
import { LogbookSession } from "../../src/openai-agents/index.js";
import { removeBin, Server } from "../serve.js";

const iterations = Number(process.argv[2] ?? 500);

function turn(i: number): AgentInputItem[] {
  return [
    { type: "message", role: "user", content: `question ${i}: what is in the file?` },
    { type: "function_call", callId: `call-${i}`, name: "read_file", arguments: JSON.stringify({ path: `src/file-${i}.ts` }), status: "completed" },
    { type: "function_call_result", callId: `call-${i}`, name: "read_file", status: "completed", output: { type: "text", text: "export const x = 1;\n".repeat(20) } },
    { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `The file defines x (${i}).` }] },
  ];
}

async function measure(name: string, s: Session): Promise<void> {
  for (let i = 0; i < 20; i++) await s.addItems(turn(-i - 1)); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const items = turn(i);
    const t0 = process.hrtime.bigint();
    await s.addItems(items);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(3);
  console.log(`${name.padEnd(34)} p50 ${q(0.5).padStart(8)} ms   p99 ${q(0.99).padStart(8)} ms   (${iterations} calls of 4 items)`);
}

const server = await Server.start();
try {
  const client = new Client({ baseUrl: server.url });
  await measure("MemorySession", new MemorySession());
  await measure("LogbookSession, flush: false", new LogbookSession({ client, key: "bench-noflush", flush: false }));
  await measure("LogbookSession, flush: true", new LogbookSession({ client, key: "bench-flush", flush: true }));
} finally {
  await server.stop();
  server.removeData();
  removeBin();
}
