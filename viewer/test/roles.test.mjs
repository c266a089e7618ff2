// The viewer shows a credential only what it may see and only the controls
// it may use, in real Chromium against real `logbook serve` processes:
//
// - with GET /v1/whoami stubbed (page.route) over the demo's store, the
//   controls each role gets on the Sessions view and a session's view, a
//   whoami that fails or names an unknown role (read-only), and an
//   operator's tenant picker (every /v1 call then names the tenant), also
//   preset by a link's ?tenant=;
// - end to end, with tokens of `logbook token create` in two tenants: a
//   read token's page has no write control, a write token's has them and
//   they act in its tenant, tenant A's page never lists B's sessions nor
//   opens one, and an operator's picker switches between them.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { demoStore, logbook, pages, Server, screenshot, tempDir } from "./harness.mjs";

const newPage = pages();

/** Every control of the page (data-action), in document order. */
function actions(page) {
  return page.locator("[data-action]").evaluateAll((els) => els.map((e) => e.dataset.action));
}

/** Waits until the header names the credential whoami answered (the controls are drawn in the same turn). */
async function credentialShown(page, role) {
  await page.locator(`#whoami[data-role="${role}"]`).waitFor();
}

/** A page that answers GET /v1/whoami with who (an object), or with status 500 when who is a number. */
async function stubbed(who) {
  const page = await newPage();
  await page.route(/\/v1\/whoami(\?.*)?$/, (route) =>
    typeof who === "number"
      ? route.fulfill({ status: who, contentType: "application/problem+json", body: JSON.stringify({ status: who, code: "IO_ERROR", detail: "stubbed" }) })
      : route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(who) }),
  );
  return page;
}

describe("controls by role, whoami stubbed", () => {
  let srv;
  before(async () => {
    srv = await Server.start(["--config", demoStore()]);
  });
  after(async () => srv?.stop());

  const write = ["fork", "flush", "release"];
  const admin = [...write, "hold", "release-hold", "delete"];
  for (const [role, list, session] of [
    ["read", [], []],
    ["write", ["create"], write],
    ["admin", ["create"], admin],
    ["operator", ["create"], admin],
    ["auditor", [], []], // a role this page does not know may only read
  ]) {
    test(`${/^[aeiou]/.test(role) ? "an" : "a"} ${role} credential gets ${list.length + session.length ? [...list, ...session].join(", ") : "no write control"}`, async () => {
      const page = await stubbed({ name: `t-${role}`, tenant: "default", role });
      await page.goto(srv.url + "/");
      await page.locator('tr[data-session="demo"]').waitFor();
      await credentialShown(page, role);
      assert.deepEqual(await actions(page), list, "the Sessions view");
      assert.equal(await page.locator("#tenant").count(), role === "operator" ? 1 : 0, "the tenant picker is an operator's");
      await page.goto(srv.url + "/#/sessions/demo");
      await page.locator('.row[data-seq="0"]:not(.loading)').waitFor();
      await credentialShown(page, role);
      assert.deepEqual(await actions(page), session, "the session's view");
      if (role === "read" || role === "admin") await screenshot(page, `role-${role}`);
      assert.deepEqual(page.errors, []);
      await page.close();
    });
  }

  test("a whoami that fails leaves the page read-only", async () => {
    const page = await stubbed(500);
    await page.goto(srv.url + "/#/sessions/demo");
    await page.locator('.row[data-seq="0"]:not(.loading)').waitFor();
    await credentialShown(page, "read");
    assert.deepEqual(await actions(page), []);
    await page.close();
  });

  test("a write credential's fork makes the child at the picked seq and opens it", async () => {
    const page = await stubbed({ name: "w", tenant: "default", role: "write" });
    await page.goto(srv.url + "/#/sessions/demo?seq=5");
    await page.locator('.row[data-seq="5"].picked').waitFor();
    await page.locator('[data-action="fork"]').click();
    await page.waitForFunction(() => /^#\/sessions\//.test(location.hash) && !location.hash.startsWith("#/sessions/demo"));
    const child = decodeURIComponent(/^#\/sessions\/([^?]+)/.exec(await page.evaluate(() => location.hash))[1]);
    const info = await (await fetch(`${srv.url}/v1/sessions/${encodeURIComponent(child)}`)).json();
    assert.equal(info.header.parentSession, "demo");
    assert.equal(info.header.inheritedEventCount, 6, "the child keeps seqs 0 … 5");
    await fetch(`${srv.url}/v1/sessions/${encodeURIComponent(child)}/release`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("an operator's picked tenant is named on every /v1 call after the pick", async () => {
    const page = await stubbed({ name: "op", tenant: "default", role: "operator" });
    const calls = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/v1/")) calls.push(u);
    });
    await page.goto(srv.url + "/");
    await page.locator('tr[data-session="demo"]').waitFor();
    assert.equal(await page.inputValue("#tenant"), "default");
    assert.ok(calls.every((u) => !u.searchParams.has("tenant")), "no tenant before the pick");
    // A name the rule refuses is not used.
    await page.fill("#tenant", "Not_A-Tenant");
    await page.press("#tenant", "Enter");
    assert.equal(await page.locator("#tenant:invalid").count(), 1);
    calls.length = 0;
    await page.fill("#tenant", "team-b");
    await page.press("#tenant", "Enter");
    await page.locator('#whoami[data-tenant="team-b"]').waitFor();
    await page.waitForFunction(() => document.querySelector("#tenant")?.value === "team-b");
    const listed = calls.filter((u) => u.pathname === "/v1/sessions");
    assert.ok(listed.length > 0, "the Sessions view listed again");
    for (const u of calls) assert.equal(u.searchParams.get("tenant"), "team-b", `${u.pathname}${u.search}`);
    await page.close();
  });

  test("a link's ?tenant= picks the tenant for the tab and leaves the address", async () => {
    const page = await stubbed({ name: "op", tenant: "default", role: "operator" });
    const calls = [];
    page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/v1/")) calls.push(u);
    });
    await page.goto(srv.url + "/?tenant=team-b");
    await page.locator('#whoami[data-tenant="team-b"]').waitFor();
    await page.waitForFunction(() => document.querySelector("#tenant")?.value === "team-b");
    assert.equal(await page.evaluate(() => location.search), "", "the parameter leaves the address");
    assert.ok(calls.some((u) => u.pathname === "/v1/sessions"), "the Sessions view listed");
    for (const u of calls) assert.equal(u.searchParams.get("tenant"), "team-b", `${u.pathname}${u.search}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("tokens of two tenants, end to end", () => {
  let srv;
  /** token name → token */
  const tokens = {};
  /** GET or POST with the operator's token on tenant t. */
  const op = (method, path, t, body) =>
    fetch(`${srv.url}${path}${path.includes("?") ? "&" : "?"}tenant=${t}`, {
      method,
      headers: { Authorization: `Bearer ${tokens.op}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  before(async () => {
    const data = join(tempDir("logbook-viewer-tenants-"), "data");
    for (const [name, tenant, role] of [
      ["op", "*", "operator"],
      ["a-read", "a", "read"],
      ["a-write", "a", "write"],
      ["b-admin", "b", "admin"],
    ]) {
      const out = logbook(["--data", data, "token", "create", "--tenant", tenant, "--role", role, "--name", name]).trim().split("\n");
      tokens[name] = out[out.length - 1];
    }
    srv = await Server.start(["--data", data]);
    for (const [t, id] of [
      ["a", "a-only"],
      ["a", "same-id"],
      ["b", "b-only"],
      ["b", "same-id"],
    ]) {
      const r = await op("POST", "/v1/sessions", t, { id });
      assert.equal(r.status, 201, `create ${t}/${id}: ${await r.text()}`);
      const rel = await op("POST", `/v1/sessions/${id}/release`, t, {});
      assert.equal(rel.status, 204, `release ${t}/${id}: ${await rel.text()}`);
    }
  });
  after(async () => srv?.stop());

  /** A page whose tab holds token (as the token dialog would have kept it). */
  async function as(name) {
    const page = await newPage();
    await page.addInitScript((t) => sessionStorage.getItem("logbook.token") === null && sessionStorage.setItem("logbook.token", t), tokens[name]);
    return page;
  }

  /** The ids the Sessions view lists once it has listed. */
  async function listed(page) {
    await page.locator('p[role="status"]').filter({ hasText: /of \d+ sessions/ }).waitFor();
    return (await page.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.session))).sort();
  }

  test("a read token of tenant a sees a's sessions only, and no write control", async () => {
    const page = await as("a-read");
    await page.goto(srv.url + "/");
    assert.deepEqual(await listed(page), ["a-only", "same-id"]);
    await credentialShown(page, "read");
    assert.equal(await page.locator("#whoami").innerText(), "a-read · read · tenant a");
    assert.deepEqual(await actions(page), []);
    assert.equal(await page.locator("#tenant").count(), 0);
    await page.goto(srv.url + "/#/sessions/same-id");
    await page.locator('[data-fact="length"]').waitFor();
    assert.deepEqual(await actions(page), []);
    // B's session is not found, exactly as a session that does not exist.
    await page.goto(srv.url + "/#/sessions/b-only");
    await page.locator(".facts.error").waitFor();
    assert.match(await page.locator(".facts.error").innerText(), /SESSION_NOT_FOUND/);
    await screenshot(page, "tenant-a-read");
    await page.close();
  });

  test("a write token of tenant a has the write controls, and they act in a", async () => {
    const page = await as("a-write");
    await page.goto(srv.url + "/");
    assert.deepEqual(await listed(page), ["a-only", "same-id"]);
    await credentialShown(page, "write");
    assert.deepEqual(await actions(page), ["create"]);
    await page.locator('[data-action="create"]').click();
    await page.waitForFunction(() => /^#\/sessions\/./.test(location.hash));
    const id = decodeURIComponent(/^#\/sessions\/([^?]+)/.exec(await page.evaluate(() => location.hash))[1]);
    await page.locator('[data-action="fork"]').waitFor();
    assert.deepEqual(await actions(page), ["fork", "flush", "release"]);
    await page.locator('[data-action="release"]').click();
    await page.locator(".actions [role=status]").filter({ hasText: "Released." }).waitFor();
    assert.equal((await op("GET", `/v1/sessions/${id}`, "a")).status, 200, "created in tenant a");
    assert.equal((await op("GET", `/v1/sessions/${id}`, "b")).status, 404, "not in tenant b");
    await page.close();
  });

  test("an admin token of tenant b sees b's sessions only, with every control", async () => {
    const page = await as("b-admin");
    await page.goto(srv.url + "/");
    assert.deepEqual(await listed(page), ["b-only", "same-id"]);
    await page.goto(srv.url + "/#/sessions/same-id");
    await page.locator('[data-action="delete"]').waitFor();
    assert.deepEqual(await actions(page), ["fork", "flush", "release", "hold", "release-hold", "delete"]);
    await page.close();
  });

  test("an operator picks the tenant whose sessions it lists", async () => {
    const page = await as("op");
    await page.goto(srv.url + "/");
    assert.deepEqual(await listed(page), [], "the implicit tenant holds nothing");
    await page.fill("#tenant", "b");
    await page.press("#tenant", "Enter");
    await page.locator('tr[data-session="b-only"]').waitFor();
    assert.deepEqual(await listed(page), ["b-only", "same-id"]);
    await page.locator('tr[data-session="b-only"] a').click();
    await page.locator('[data-fact="length"]').waitFor();
    await page.goto(srv.url + "/");
    await page.fill("#tenant", "a");
    await page.press("#tenant", "Enter");
    await page.locator('tr[data-session="a-only"]').waitFor();
    const a = await listed(page); // and the session the write token's test created
    assert.ok(a.includes("a-only") && a.includes("same-id") && !a.includes("b-only"), `listed ${a}`);
    await screenshot(page, "tenant-operator");
    await page.close();
  });
});
