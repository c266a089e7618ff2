// The create option protocol against a real `logbook serve` (see serve.ts).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, LogbookError } from "../src/index.js";
import { removeBin, Server } from "./serve.js";

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

test("create with protocol lenient stores a lenient header; strict is the default; another value is USAGE and creates nothing", async () => {
  const s = await lb.create({ id: "t-lenient", protocol: "lenient" });
  assert.equal(s.header?.protocol, "lenient");
  const strict = await lb.create({ id: "t-strict", protocol: "strict" });
  assert.equal(strict.header?.protocol, undefined);
  await assert.rejects(
    lb.create({ id: "t-bad", protocol: "loose" as "strict" }),
    (e: unknown) => e instanceof LogbookError && e.code === "USAGE" && e.detail.includes('"lenient"'),
  );
  const page = await lb.list();
  assert.ok(!page.sessions.some((e) => e.id === "t-bad"), "a refused create left t-bad behind");
});
