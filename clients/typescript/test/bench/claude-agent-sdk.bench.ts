// What durability costs a Claude Agent SDK user: the latency of
// SessionStore.append, p50 and p99, of one transcript line (the SDK's
// 'eager' flush mode sends one line per call) and of ten (a 'batched'
// flush of a busy turn), on LogbookSessionStore over a loopback
// `logbook serve` without and with flush, beside the SDK's
// InMemorySessionStore. Run the compiled script with node, after the build
// of the tests: claude-agent-sdk.bench.js [appends per store, default 2000].

import { readFileSync } from "node:fs";

import { InMemorySessionStore, type SessionStore, type SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";

import { LogbookSessionStore } from "../../src/claude-agent-sdk/index.js";
import { Client } from "../../src/index.js";
import { removeBin, Server } from "../serve.js";

const count = Number(process.argv[2] ?? 2000);
const lines = readFileSync(new URL("../../../test/testdata/claude-code/7f3c2a1e-5b4d-4c8e-9a10-2b3c4d5e6f70.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => JSON.parse(l) as SessionStoreEntry);

// line returns the i-th line of an endless transcript: the fixture's lines
// in turn, each with a uuid of its own.
function line(i: number): SessionStoreEntry {
  const l = lines[i % lines.length]!;
  return l.uuid === undefined ? l : { ...l, uuid: `${l.uuid.slice(0, 24)}${String(i).padStart(12, "0")}` };
}

// measure appends count batches of batch lines to a new session of store
// (after 50 to another, to warm up) and prints the latencies.
async function measure(name: string, store: SessionStore, batch: number): Promise<void> {
  const key = { projectKey: "-bench", sessionId: `${name}-${batch}` };
  for (let i = 0; i < 50; i++) await store.append({ ...key, sessionId: `${key.sessionId}-warm` }, [line(i)]);
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const lines = Array.from({ length: batch }, (_, j) => line(i * batch + j));
    const t = process.hrtime.bigint();
    await store.append(key, lines);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(3);
  console.log(`${name.padEnd(22)} ${String(batch).padStart(2)} line(s) x ${count}  p50 ${q(0.5)} ms  p99 ${q(0.99)} ms`);
}

const srv = await Server.start();
try {
  const client = new Client({ baseUrl: srv.url });
  for (const batch of [1, 10]) {
    await measure("InMemorySessionStore", new InMemorySessionStore(), batch);
    await measure("logbook", new LogbookSessionStore({ client }), batch);
    await measure("logbook flush", new LogbookSessionStore({ client, flush: true }), batch);
  }
} finally {
  await srv.stop();
  srv.removeData();
  removeBin();
}
