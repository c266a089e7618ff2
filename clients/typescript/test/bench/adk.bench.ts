// The cost of durability for a Google ADK agent: appendEvent latency of
// LogbookSessionService (over a loopback `logbook serve`, with and without
// flush) beside ADK's InMemorySessionService. Run after the test build:
//
//   LOGBOOK_TEST_BIN=/path/to/logbook node build/test/bench/adk.bench.js [events]
//
// Each round appends a user message and a model reply (each a whole turn's
// typed events and its adk/event record, one atomic operation), and the
// numbers are per appendEvent call.

import { performance } from "node:perf_hooks";

import { createEvent, InMemorySessionService, type BaseSessionService } from "@google/adk";

import { LogbookSessionService } from "../../src/adk/index.js";
import { Client } from "../../src/index.js";
import { removeBin, Server } from "../serve.js";

const events = Number(process.argv[2] ?? 1000);
const warmup = 50;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(name: string, svc: BaseSessionService): Promise<void> {
  const session = await svc.createSession({ appName: "bench", userId: "u", sessionId: `s-${name}` });
  const times: number[] = [];
  for (let i = 0; i < warmup + events; i++) {
    const user = i % 2 === 0;
    const event = createEvent({
      invocationId: `inv-${i >> 1}`,
      author: user ? "user" : "agent",
      content: { role: user ? "user" : "model", parts: [{ text: `${user ? "question" : "answer"} ${i}: ${"lorem ipsum ".repeat(20)}` }] },
      actions: { stateDelta: { counter: i } },
    });
    const t0 = performance.now();
    await svc.appendEvent({ session, event });
    if (i >= warmup) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(`${name.padEnd(28)} p50 ${percentile(times, 50).toFixed(3)} ms  p99 ${percentile(times, 99).toFixed(3)} ms  mean ${mean.toFixed(3)} ms  (${events} appendEvent calls)`);
}

const srv = await Server.start();
try {
  const client = new Client({ baseUrl: srv.url });
  await measure("InMemorySessionService", new InMemorySessionService());
  await measure("logbook, no flush", new LogbookSessionService({ client }));
  await measure("logbook, flush", new LogbookSessionService({ client, flush: true }));
} finally {
  await srv.stop();
  srv.removeData();
  removeBin();
}
