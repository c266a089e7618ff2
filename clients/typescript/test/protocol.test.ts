// The agent-loop rules (docs/format.md, "The agent-loop protocol") through
// the client against one real `logbook serve`: the fixture every door runs,
// internal/protocolcases/testdata/cases.json. Each rule's event throws a
// LogbookError with status 409, its code and Meta, and changes nothing,
// alone and as an appendGroup member; the legal patterns are accepted; a
// session created lenient accepts the refused events.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { Client, LogbookError, type Event, type Input, type Session } from "../src/index.js";
import { removeBin, Server } from "./serve.js";

interface Refused {
  name: string;
  prefix: Input<unknown>[];
  event: Input<unknown>;
  code: string;
  meta: Record<string, string>;
  next: Input<unknown>;
}

interface Cases {
  refused: Refused[];
  legal: { name: string; events: Input<unknown>[] }[];
  groups: { name: string; prefix: Input<unknown>[]; group: Input<unknown>[]; index: number; code: string; meta: Record<string, string>; next: Input<unknown> }[];
}

const cases = JSON.parse(readFileSync(new URL("../../../../internal/protocolcases/testdata/cases.json", import.meta.url), "utf8")) as Cases;

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

// create makes session id, lenient or strict.
async function create(id: string, lenient: boolean): Promise<Session> {
  const s = await lb.create(lenient ? { id, protocol: "lenient" } : { id });
  if (lenient) assert.equal(s.header?.protocol, "lenient");
  return s;
}

// log returns the session's envelopes.
async function log(s: Session): Promise<string[]> {
  return (await s.events()).map((e: Event) => e.envelope);
}

// appendAll appends inputs to a new session, in one request when together
// is set and one each otherwise, and requires seqs 0, 1, ….
async function appendAll(s: Session, inputs: Input<unknown>[], together: boolean): Promise<string[]> {
  const batches = together ? [inputs] : inputs.map((i) => [i]);
  let next = 0;
  for (const b of batches) {
    if (b.length === 0) continue;
    const evs = await s.append(b);
    assert.deepEqual(
      evs.map((e) => e.seq),
      b.map((_, i) => next + i),
    );
    next += b.length;
  }
  const l = await log(s);
  assert.equal(l.length, inputs.length);
  return l;
}

// refused awaits a call that must fail with a rule's code: status 409, the
// case's Meta (and no other key but the append's report), nothing appended.
async function refused(call: Promise<Event[]>, code: string, meta: Record<string, string>, index: number): Promise<void> {
  await assert.rejects(call, (err: unknown) => {
    assert.ok(err instanceof LogbookError, `not a LogbookError: ${String(err)}`);
    assert.equal(err.code, code, err.detail);
    assert.equal(err.status, 409);
    assert.equal(err.appended, 0);
    assert.equal(err.index, index);
    const got = Object.fromEntries(Object.entries(err.problem.meta ?? {}).filter(([k]) => !appendReport.includes(k)));
    assert.deepEqual(got, meta);
    return true;
  });
}

// unchanged checks that the log is the one before the refusal and that
// next gets the seq after it.
async function unchanged(s: Session, beforeLog: string[], next: Input<unknown>): Promise<void> {
  assert.deepEqual(await log(s), beforeLog);
  const evs = await s.append([next]);
  assert.deepEqual(
    evs.map((e) => e.seq),
    [beforeLog.length],
  );
}

cases.refused.forEach((c, i) => {
  test(`refused: ${c.name}`, async () => {
    const s = await create(`refused-${i}`, false);
    const beforeLog = await appendAll(s, c.prefix, true);
    await refused(s.append([c.event]), c.code, c.meta, 0);
    await unchanged(s, beforeLog, c.next);
  });
});

cases.legal.forEach((l, i) => {
  test(`legal: ${l.name}`, async () => {
    await appendAll(await create(`legal-${i}`, false), l.events, false);
  });
});

cases.groups.forEach((g, i) => {
  test(`group: ${g.name}`, async () => {
    const s = await create(`group-${i}`, false);
    const beforeLog = await appendAll(s, g.prefix, true);
    await refused(s.appendGroup(g.group), g.code, g.meta, g.index);
    await unchanged(s, beforeLog, g.next);
  });
});

cases.refused.forEach((c, i) => {
  test(`lenient: ${c.name}`, async () => {
    await appendAll(await create(`lenient-${i}`, true), [...c.prefix, c.event], true);
  });
});
