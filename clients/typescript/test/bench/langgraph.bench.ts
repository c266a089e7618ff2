// The latency of LogbookSaver.put, the saver's hot write method (one per
// superstep), over a loopback `logbook serve` with and without flush,
// beside LangGraph's MemorySaver. Each put stores a checkpoint whose
// "messages" channel (its last 20 messages, so every put carries the same
// amount) gained one AI message, which the saver also appends as a typed
// turn, and whose "state" channel holds about 1 KiB.
//
//   node build/test/bench/langgraph.bench.js [puts per saver, default 500]
//
// It prints p50 and p99 in milliseconds for each saver.

import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { BaseCheckpointSaver, MemorySaver, emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";

import { Client } from "../../src/index.js";
import { LogbookSaver } from "../../src/langgraph/index.js";
import { removeBin, Server } from "../serve.js";

const puts = Number(process.argv[2] ?? 500);

async function measure(name: string, saver: BaseCheckpointSaver): Promise<void> {
  const thread = `bench-${name}`;
  let config = { configurable: { thread_id: thread, checkpoint_ns: "" } } as { configurable: Record<string, unknown> };
  const messages: BaseMessage[] = [new HumanMessage({ content: "go", id: `${thread}-h` })];
  const state = { notes: "x".repeat(1000) };
  const times: number[] = [];
  for (let i = 0; i < puts; i++) {
    messages.push(new AIMessage({ content: `reply ${i}`, id: `${thread}-a${i}`, response_metadata: { model_provider: "bench", model_name: "m" } }));
    if (messages.length > 20) messages.shift();
    const cp: Checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: [...messages], state }, channel_versions: { messages: i + 1, state: 1 } };
    const newVersions: Record<string, number> = i === 0 ? { messages: 1, state: 1 } : { messages: i + 1 };
    const t0 = performance.now();
    config = (await saver.put(config, cp, { source: "loop", step: i, parents: {} }, newVersions)) as typeof config;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(3);
  console.log(`${name.padEnd(24)} puts ${puts}  p50 ${q(0.5)} ms  p99 ${q(0.99)} ms`);
}

const srv = await Server.start();
try {
  const client = new Client({ baseUrl: srv.url });
  await measure("MemorySaver", new MemorySaver());
  await measure("LogbookSaver", new LogbookSaver({ client }));
  await measure("LogbookSaver flush", new LogbookSaver({ client, flush: true }));
} finally {
  await srv.stop();
  srv.removeData();
  removeBin();
}
