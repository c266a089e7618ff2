// The client's tenant option and the credential codes against a real
// `logbook serve` with tokens of `logbook token create` in two tenants.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Client, events as ev, LogbookError, PERMISSION_DENIED, retryable, TENANT_INVALID, UNAUTHENTICATED } from "../src/index.js";
import { logbookBin, removeBin, Server } from "./serve.js";

let srv: Server;
/** Token name → token. */
const tokens: Record<string, string> = {};

before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "logbook-ts-data-"));
  for (const [name, tenant, role] of [
    ["op", "*", "operator"],
    ["a-read", "a", "read"],
    ["a-write", "a", "write"],
  ] as const) {
    const out = execFileSync(logbookBin(), ["--data", dataDir, "token", "create", "--tenant", tenant, "--role", role, "--name", name], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    tokens[name] = out.trim().split("\n").at(-1)!;
  }
  srv = await Server.start({ dataDir });
});

after(async () => {
  await srv?.stop();
  srv?.removeData();
  removeBin();
});

/** The client of token name, addressing tenant when given. */
function as(name: string, tenant?: string): Client {
  return new Client({ baseUrl: srv.url, token: tokens[name]!, ...(tenant === undefined ? {} : { tenant }) });
}

/** The error a call failed with. */
async function failure(p: Promise<unknown>): Promise<LogbookError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof LogbookError, `want a LogbookError, got ${String(err)}`);
  return err;
}

test("whoami names the credential", async () => {
  assert.deepEqual(await as("a-read").whoami(), { name: "a-read", tenant: "a", role: "read" });
  assert.deepEqual(await as("op").whoami(), { name: "op", tenant: "default", role: "operator" });
  assert.deepEqual(await as("op", "b").whoami(), { name: "op", tenant: "b", role: "operator" });
});

test("an operator's tenant option addresses that tenant's sessions on /v1", async () => {
  await as("op", "b").create({ id: "same" });
  await as("op", "b").create({ id: "b-only" });
  await as("a-write").create({ id: "same" });
  const ids = async (c: Client) => (await c.list()).sessions.map((s) => s.id).sort();
  assert.deepEqual(await ids(as("op", "b")), ["b-only", "same"]);
  assert.deepEqual(await ids(as("op", "a")), ["same"]);
  assert.deepEqual(await ids(as("a-read")), ["same"]);
  assert.deepEqual(await ids(as("op")), [], "an operator's own tenant is default");
  // Same id, two sessions: a's write lands in a only.
  await as("a-write").session("same").append([ev.turnStart(1)]);
  assert.equal((await as("op", "a").session("same").info()).length, 1);
  assert.equal((await as("op", "b").session("same").info()).length, 0);
  // B's session from a: not found, as a missing id.
  const err = await failure(as("a-read").session("b-only").info());
  assert.equal(err.code, "SESSION_NOT_FOUND");
  assert.equal(err.status, 404);
});

test("the tenant option travels as the Logbook-Tenant header on Connect", async () => {
  const res = await as("op", "b").call("POST", "/logbook.v1.Sessions/List", { json: {} });
  const ids = ((await res.json()) as { sessions?: { id: string }[] }).sessions?.map((s) => s.id).sort();
  assert.deepEqual(ids, ["b-only", "same"]);
});

test("a read credential writing is PERMISSION_DENIED, not retryable", async () => {
  const err = await failure(as("a-read").create({ id: "nope" }));
  assert.equal(err.code, PERMISSION_DENIED);
  assert.equal(err.status, 403);
  assert.equal(retryable(err), false);
  assert.equal((await as("op", "a").list()).sessions.some((s) => s.id === "nope"), false, "nothing was created");
});

test("a non-operator naming another tenant is PERMISSION_DENIED", async () => {
  const err = await failure(as("a-read", "b").list());
  assert.equal(err.code, PERMISSION_DENIED);
  assert.equal(err.status, 403);
});

test("a tenant name outside the rule is TENANT_INVALID", async () => {
  const err = await failure(as("op", "Not_Valid").list());
  assert.equal(err.code, TENANT_INVALID);
  assert.equal(err.status, 400);
  assert.equal(retryable(err), false);
});

test("an unknown token is UNAUTHENTICATED", async () => {
  const err = await failure(new Client({ baseUrl: srv.url, token: "lb_not-a-token" }).list());
  assert.equal(err.code, UNAUTHENTICATED);
  assert.equal(err.status, 401);
});
