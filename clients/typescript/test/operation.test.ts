// Operation ids (docs/format.md, "Operation ids") and labels through the
// client against real `logbook serve` processes: the operation cases of
// the fixture every door runs (internal/protocolcases/testdata/cases.json),
// appendOnce and the operationId append option, a replay after a SIGKILL
// of the server, and labels at create.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { Client, LogbookError, events as ev, type AppendOutcome, type Event, type Input, type Session } from "../src/index.js";
import { freeAddr, removeBin, Server } from "./serve.js";

interface Step {
  operationId?: string;
  events: Input<unknown>[];
  seqs?: number[];
  replayed?: boolean;
  code?: string;
  meta?: Record<string, string>;
  index?: number;
}

interface Operation {
  name: string;
  prefix: Input<unknown>[];
  steps: Step[];
}

const cases = JSON.parse(readFileSync(new URL("../../../../internal/protocolcases/testdata/cases.json", import.meta.url), "utf8")) as {
  operations: Operation[];
};

/** The Meta keys an append's problem may carry besides the rule's. */
const appendReport = ["appended", "firstSeq"];

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

// log returns the session's envelopes.
async function log(s: Session): Promise<string[]> {
  return (await s.events()).map((e: Event) => e.envelope);
}

// aTurn is a whole turn with one prompt.
function aTurn(n: number, prompt: string): Input<unknown>[] {
  return [ev.turnStart(n), ev.userText(`u${n}`, prompt), ev.turnEnd(n, ev.completed())];
}

// rejection returns the LogbookError call throws.
async function rejection(call: () => Promise<unknown>): Promise<LogbookError> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof LogbookError, String(err));
    return err;
  }
  assert.fail("the call succeeded");
}

for (const [i, c] of cases.operations.entries()) {
  test(`operation: ${c.name}`, async () => {
    const s = await lb.create({ id: `operation-${i}` });
    if (c.prefix.length > 0) await s.append(c.prefix);
    for (const [j, st] of c.steps.entries()) {
      const before = await log(s);
      const call = async (): Promise<AppendOutcome> =>
        st.operationId === undefined ? { events: await s.append(st.events), replayed: false } : s.appendOnce(st.operationId, st.events);
      if (st.code !== undefined) {
        const err = await rejection(call);
        assert.equal(err.code, st.code, `step ${j}: ${err.detail}`);
        assert.equal(err.appended, 0, `step ${j}`);
        assert.equal(err.index ?? 0, st.index ?? 0, `step ${j}`);
        const meta: Record<string, string> = { ...err.problem.meta };
        if (err.firstSeq !== undefined) meta["firstSeq"] = String(err.firstSeq);
        const want = st.meta ?? {};
        for (const [k, v] of Object.entries(want)) assert.equal(meta[k], v, `step ${j}: meta ${k}`);
        for (const k of Object.keys(meta)) assert.ok(k in want || appendReport.includes(k), `step ${j}: meta ${k} beyond the case's`);
        assert.deepEqual(await log(s), before, `step ${j}: the refusal changed the log`);
        continue;
      }
      const out = await call();
      assert.deepEqual(
        out.events.map((e) => e.seq),
        st.seqs,
        `step ${j}`,
      );
      assert.equal(out.replayed, st.replayed ?? false, `step ${j}`);
      const after = await log(s);
      assert.deepEqual(after.slice(0, before.length), before, `step ${j}`);
      assert.equal(after.length, before.length + (out.replayed ? 0 : st.events.length), `step ${j}`);
    }
  });
}

test("appendOnce replays the original envelopes; append and appendGroup take the operationId option", async () => {
  const s = await lb.create({ id: "once" });
  const first = await s.appendOnce("turn-1", aTurn(1, "hi"));
  assert.equal(first.replayed, false);
  const again = await s.appendOnce("turn-1", aTurn(1, "hi"));
  assert.equal(again.replayed, true);
  assert.deepEqual(
    again.events.map((e) => e.envelope),
    first.events.map((e) => e.envelope),
  );
  for (const evs of [await s.append(aTurn(1, "hi"), { operationId: "turn-1" }), await s.appendGroup(aTurn(1, "hi"), { operationId: "turn-1" })]) {
    assert.deepEqual(
      evs.map((e) => e.envelope),
      first.events.map((e) => e.envelope),
    );
  }
  const conflict = await rejection(() => s.appendOnce("turn-1", aTurn(1, "other")));
  assert.equal(conflict.code, "OPERATION_CONFLICT");
  assert.equal(conflict.status, 409);
  assert.equal(conflict.firstSeq, 0);
  assert.deepEqual(conflict.problem.meta, { operationId: "turn-1", count: "3" });
  for (const bad of ["", "x".repeat(129), "tab\there", "café"]) {
    const err = await rejection(() => s.appendOnce(bad, aTurn(2, "two")));
    assert.equal(err.code, "OPERATION_ID_INVALID", `id ${JSON.stringify(bad)}`);
    assert.equal(err.status, 400);
  }
  assert.equal((await log(s)).length, 3);
});

test("labels are in the stored header; labels the rules refuse are USAGE and create nothing", async () => {
  const labels = { framework: "openai-agents", key: "app/user-7/chat 3" };
  const s = await lb.create({ id: "labelled", labels });
  assert.deepEqual(s.header?.labels, labels);
  assert.deepEqual((await s.info()).header.labels, labels);
  for (const bad of [{ Key: "v" }, { k: "a\u0001b" }, Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"]))]) {
    const err = await rejection(() => lb.create({ id: "badly-labelled", labels: bad }));
    assert.equal(err.code, "USAGE");
    assert.equal(err.status, 400);
  }
  const gone = await rejection(() => lb.session("badly-labelled").info());
  assert.equal(gone.code, "SESSION_NOT_FOUND");
});

test("an operation flushed before the answer is replayed after a SIGKILL of the server", async () => {
  const addr = await freeAddr();
  let own = await Server.start({ addr });
  try {
    const s = await new Client({ baseUrl: own.url }).create({ id: "killed" });
    const first = await s.appendOnce("turn-1", aTurn(1, "hi"), { flush: true });
    assert.equal(first.replayed, false);
    await own.kill();
    own = await Server.start({ addr, dataDir: own.dataDir });
    const again = await new Client({ baseUrl: own.url }).session("killed").appendOnce("turn-1", aTurn(1, "hi"));
    assert.equal(again.replayed, true);
    assert.deepEqual(
      again.events.map((e) => e.envelope),
      first.events.map((e) => e.envelope),
    );
  } finally {
    await own.kill();
    own.removeData();
  }
});
