// The viewer in a real browser (Debian's Chromium through playwright-core)
// against real `logbook serve` processes: the demo's store, a live session
// another client appends to, a server with a token, and a stored session of
// 100,000 messages.

import assert from "node:assert/strict";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { bigStore, demoStore, logbook, pages, Server, screenshot, tempDir } from "./harness.mjs";

/** A new page whose console errors fail the test that reads them. */
const newPage = pages();

/** The seqs of every timeline row, scrolling the list from top to bottom. */
async function allRows(page) {
  return page.evaluate(async () => {
    const tl = document.querySelector(".timeline");
    const seen = new Map();
    tl.scrollTop = 0;
    for (;;) {
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      for (const r of tl.querySelectorAll(".row:not(.loading)")) seen.set(Number(r.dataset.seq), r.dataset.type);
      if (tl.scrollTop + tl.clientHeight >= tl.scrollHeight) break;
      tl.scrollTop += tl.clientHeight / 2;
    }
    tl.scrollTop = 0;
    return [...seen.entries()].sort((a, b) => a[0] - b[0]);
  });
}

describe("the demo's store", () => {
  let srv;
  before(async () => {
    srv = await Server.start(["--config", demoStore()]);
  });
  after(async () => srv?.stop());

  test("the sessions list shows both sessions, with the fork's parent", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/");
    await page.locator('tr[data-session="demo-fork"]').waitFor();
    const ids = await page.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.session));
    assert.deepEqual([...ids].sort(), ["demo", "demo-fork"]);
    assert.match(await page.locator('tr[data-session="demo-fork"]').innerText(), /demo @18/);
    await page.locator('tr[data-session="demo"] [data-col="messages"]').filter({ hasText: /^\d+$/ }).waitFor();
    await page.fill("#filter", "fork");
    assert.equal(await page.locator("tbody tr").count(), 1);
    await page.fill("#filter", "");
    await screenshot(page, "sessions");
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("the timeline shows every event and flags the crash-repair closers", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/demo");
    await page.locator('.row[data-seq="0"]:not(.loading)').waitFor();
    const info = await (await fetch(`${srv.url}/v1/sessions/demo`)).json();
    const rows = await allRows(page);
    assert.equal(rows.length, info.length);
    assert.deepEqual(rows.map(([s]) => s), [...Array(info.length).keys()]);
    // The closers the resume appended after the crash: the tool result of
    // the interrupted call, its step/end and turn/end, then the end-seed.
    await page.locator(".timeline").evaluate((tl) => (tl.scrollTop = 20 * 26));
    for (const [seq, badge, why] of [
      [27, "repair", /outcome is unknown/],
      [28, "repair", /crash repair/],
      [29, "repair", /crash repair/],
      [30, "store", /new lifecycle/],
    ]) {
      const b = page.locator(`.row[data-seq="${seq}"] .badge.synth`);
      assert.equal(await b.innerText(), badge, `seq ${seq}`);
      assert.match(await b.getAttribute("title"), why, `seq ${seq}`);
    }
    // The resume's own end-seed (seq 19, before turn 2) is flagged too.
    assert.match(await page.locator('.row[data-seq="19"] .badge.synth').getAttribute("title"), /new lifecycle/);
    assert.deepEqual(await page.locator(".row.synthetic").evaluateAll((r) => r.map((e) => Number(e.dataset.seq))), [19, 27, 28, 29, 30]);
    // The store's benign marker is not drawn in the red of a repair.
    const colours = (seq) => page.locator(`.row[data-seq="${seq}"] .badge.synth`).evaluate((b) => [getComputedStyle(b).color, getComputedStyle(b).backgroundColor]);
    const [repairFg, repairBg] = await colours(27);
    const [storeFg, storeBg] = await colours(30);
    assert.notEqual(storeBg, repairBg);
    assert.notEqual(storeFg, repairBg);
    await screenshot(page, "timeline-repair");
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("clicking the compaction checkpoint highlights the range it replaced", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/demo?seq=46");
    const cp = page.locator('.row[data-seq="46"]');
    await cp.waitFor();
    assert.match(await cp.innerText(), /checkpoint · replaces 2–38/);
    await cp.locator(".seq").click();
    await page.locator(".row.hl-by").waitFor();
    const hl = await page.locator(".row.hl").evaluateAll((rows) => rows.map((r) => Number(r.dataset.seq)));
    assert.ok(hl.length > 0);
    assert.ok(hl.every((s) => s >= 2 && s <= 38), `highlighted ${hl}`);
    // Every rendered row inside the range is highlighted; none outside.
    const rendered = await page.locator(".row").evaluateAll((rows) => rows.map((r) => [Number(r.dataset.seq), r.classList.contains("hl")]));
    for (const [s, on] of rendered) assert.equal(on, s >= 2 && s <= 38, `seq ${s}`);
    // The surface shows which events the compaction took off it.
    await page.locator('.row[data-seq="38"].shadowed').waitFor();
    assert.equal(await page.locator('.row[data-seq="41"].shadowed').count(), 0);
    await screenshot(page, "compaction");
    // Picking another row clears the highlight; the shadow marks are as of
    // the picked seq, and at seq 30 the compaction had not happened.
    await page.locator('.row[data-seq="30"] .seq').click();
    await page.locator('.row[data-seq="30"].picked').waitFor();
    assert.equal(await page.locator(".row.hl, .row.hl-by").count(), 0);
    await page.waitForFunction(() => document.querySelector('.row[data-seq="38"]') && !document.querySelector(".row.shadowed"));
    await page.locator('.row[data-seq="46"] .seq').click();
    await page.locator('.row[data-seq="38"].shadowed').waitFor();
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("picking seq 18 shows the 7 messages of the fork point, the request and the fork tree", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/demo");
    await page.locator('.row[data-seq="18"]').click();
    await page.locator("#msg-count").filter({ hasText: "7 messages" }).waitFor();
    assert.equal(await page.locator("ol.messages > li").count(), 7);
    assert.deepEqual(
      await page.locator("ol.messages > li").evaluateAll((l) => l.map((li) => Number(li.dataset.seq))),
      [1, 2, 6, 8, 11, 13, 16],
    );
    await page.locator("#request-json").filter({ hasText: "mock-coder-1" }).waitFor();
    await screenshot(page, "model-saw-18");
    // The seq slider picks too.
    await page.locator("#seq-slider").fill("2");
    await page.locator("#msg-count").filter({ hasText: "2 messages" }).waitFor();
    // Keyboard: arrow down from the picked row and Enter picks the next.
    await page.locator(".timeline").focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.locator("#seq-out").filter({ hasText: /^3$/ }).waitFor();
    await page.click("#tab-forks");
    const fork = page.locator('.lineage a[href="#/sessions/demo-fork?seq=18"]');
    await fork.waitFor();
    await screenshot(page, "forks");
    await fork.click();
    await page.locator('.row[data-seq="18"].picked').waitFor();
    await page.click("#tab-saw");
    await page.locator("#msg-count").filter({ hasText: "7 messages" }).waitFor();
    await screenshot(page, "fork-child-at-18");
    assert.deepEqual(page.errors, []);
    await page.close();
  });
  test("provenance: the checkpoint's why tree reaches the tool results it summarized", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/demo?seq=46");
    await page.locator("#msg-count").filter({ hasText: "3 messages" }).waitFor();
    // The checkpoint's "why?" in the messages the model saw opens its tree.
    await page.locator('ol.messages > li[data-seq="46"] button', { hasText: "why?" }).click();
    const tree = page.locator('ul.why[aria-label="Provenance of seq 46"]');
    await tree.waitFor();
    const want = await (await fetch(`${srv.url}/v1/sessions/demo/why?seq=46`)).json();
    const seqs = (n) => [n.seq, ...(n.derivedFrom ?? []).flatMap(seqs)];
    assert.deepEqual(await tree.locator("li").evaluateAll((l) => l.map((li) => Number(li.dataset.seq))), seqs(want));
    assert.ok(seqs(want).includes(8), "the tree reaches tool result 8");
    assert.match(await tree.locator('li[data-seq="45"]').first().innerText(), /compaction\/summary/);
    await screenshot(page, "provenance-46");
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("tokens per turn, the request shapes the server offers, and dark mode", async () => {
    const page = await newPage();
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(srv.url + "/#/sessions/demo?seq=18");
    await page.locator("#msg-count").filter({ hasText: "7 messages" }).waitFor();
    const tokens = await (await fetch(`${srv.url}/v1/sessions/demo/tokens?at=18`)).json();
    const t = page.locator("details.tokens");
    assert.match(await t.locator("summary").innerText(), new RegExp(`≈ ${tokens.total} tokens in total`));
    await t.locator("summary").click();
    assert.equal(await t.locator("tbody tr").count(), tokens.perTurn.length);
    // Format buttons only when the server refuses an unknown format (so it
    // knows some); one that ignores the parameter gets logbook's shape only.
    const probe = await fetch(`${srv.url}/v1/sessions/demo/request?at=18&format=no-such-format`);
    await page.locator("#request-json").filter({ hasText: "mock-coder-1" }).waitFor();
    assert.equal(await page.locator(".formats button").count() > 0, probe.status === 400);
    if (probe.status === 400) {
      // OpenAI's shape: the system prompt is a message; Anthropic's: a member.
      await page.click('.formats button[data-format="openai"]');
      await page.locator("#request-json").filter({ hasText: '"tool_calls"' }).waitFor();
      assert.doesNotMatch(await page.locator("#request-json").innerText(), /"header"/);
      await page.click('.formats button[data-format="anthropic"]');
      await page.locator("#request-json").filter({ hasText: '"max_tokens"' }).waitFor();
      assert.match(await page.locator("#request-json").innerText(), /"system": \[/);
      assert.equal(await page.locator('.formats button[aria-pressed="true"]').innerText(), "anthropic");
    }
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, "rgb(20, 24, 29)");
    await screenshot(page, "dark-tokens");
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("keyboard: arrows move, left and right collapse and expand a turn, Enter picks", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/demo");
    await page.locator('.row[data-seq="0"]:not(.loading)').waitFor();
    const length = (await (await fetch(`${srv.url}/v1/sessions/demo`)).json()).length;
    await page.locator(".timeline").focus();
    // The active row is marked as the key is handled, so it is read right
    // after each key. End first, so that Home is seen to move it (the
    // active row starts at 0).
    await page.keyboard.press("End");
    assert.equal(await activeRow(page), `ev-${length - 1}`);
    await page.keyboard.press("Home");
    assert.equal(await activeRow(page), "ev-0");
    await page.keyboard.press("ArrowLeft"); // collapse turn 1 (seqs 1–18)
    await page.locator('.row[data-seq="0"][aria-expanded="false"]').waitFor();
    assert.equal(await page.locator('.row[data-seq="5"]').count(), 0);
    await page.keyboard.press("ArrowDown"); // the row after the turn: 19
    assert.equal(await activeRow(page), "ev-19");
    await screenshot(page, "keyboard-collapsed");
    await page.keyboard.press("ArrowUp");
    assert.equal(await activeRow(page), "ev-0");
    await page.keyboard.press("ArrowRight");
    await page.locator('.row[data-seq="5"]').waitFor();
    await page.keyboard.press("ArrowDown");
    assert.equal(await activeRow(page), "ev-1");
    await page.keyboard.press("Enter");
    await page.locator('.row[data-seq="1"].picked').waitFor();
    assert.equal(await page.locator("#seq-out").innerText(), "1");
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

// activeRow is the row the timeline names as its active one. A key that
// moves it marks it before the key's handling ends (Timeline.reveal draws
// at once); it used to be marked on the next animation frame, and a read
// right after the key raced that frame under load (expected ev-19, got
// ev-0).
async function activeRow(page) {
  return page.locator(".timeline").getAttribute("aria-activedescendant");
}

describe("a live session", () => {
  let srv;
  before(async () => {
    srv = await Server.start(["--data", tempDir("logbook-viewer-live-")]);
  });
  after(async () => srv?.stop());

  const append = async (lines) => {
    const r = await fetch(`${srv.url}/v1/sessions/live/events`, {
      method: "POST",
      headers: { "Content-Type": "application/x-ndjson" },
      body: lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
    });
    assert.equal(r.status, 200, await r.text());
  };

  test("receives an event appended by another client within a second", async () => {
    const r = await fetch(`${srv.url}/v1/sessions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ id: "live" }) });
    assert.equal(r.status, 201, await r.text());
    await append([
      { type: "turn/start", data: { turn: 1 } },
      { type: "user/message", data: { id: "u1", role: "user", content: [{ type: "text", text: "hello" }], source: { kind: "prompt" } }, surfaceOp: "append" },
    ]);
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/live");
    await page.locator('.row[data-seq="1"]:not(.loading)').waitFor();
    await page.locator(".facts .badge.live", { hasText: "following" }).waitFor();
    await new Promise((r) => setTimeout(r, 300)); // the follow is connected
    const t0 = Date.now();
    await append([{ type: "step/start", data: { turn: 1, step: 1 } }]);
    await page.locator('.row[data-seq="2"][data-type="step/start"]').waitFor({ timeout: 1000 });
    const ms = Date.now() - t0;
    console.log(`live: the appended event showed after ${ms} ms`);
    assert.ok(ms <= 1000, `${ms} ms`);
    assert.match(await page.locator('[data-fact="length"]').innerText(), /3 events/);
    // At the last event, the pick follows the newest one and the pane shows it.
    await page.locator('.row[data-seq="2"] .seq').click();
    await page.locator("#seq-out").filter({ hasText: /^2$/ }).waitFor();
    await append([
      { type: "assistant/message", data: { turn: 1, step: 1, message: { id: "a1", role: "assistant", content: [{ type: "text", text: "hi there" }], source: { kind: "model", provider: "mock", model: "mock-1" } }, stream: [] }, surfaceOp: "append" },
      { type: "step/end", data: { turn: 1, step: 1 } },
    ]);
    await page.locator('.row[data-seq="4"].picked').waitFor();
    await page.locator("#msg-count").filter({ hasText: "2 messages" }).waitFor();
    assert.match(await page.locator("#msg-count").locator("..").innerText(), /as of seq 4/);
    // Not at the end, the pick stays where the reader put it.
    await page.locator('.row[data-seq="1"] .seq').click();
    await page.locator("#seq-out").filter({ hasText: /^1$/ }).waitFor();
    await append([{ type: "turn/end", data: { turn: 1, reason: { kind: "completed" } } }]);
    await page.locator('.row[data-seq="5"][data-type="turn/end"]').waitFor();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await page.locator("#seq-out").innerText(), "1");
    await screenshot(page, "live");
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("damaged logs", () => {
  let srv;
  before(async () => {
    const dir = tempDir("logbook-viewer-damaged-");
    const cfg = join(dir, "plain.hcl");
    writeFileSync(cfg, 'persistence "jsonl" {\n  compression = "none"\n}\n');
    const global = ["--config", cfg, "--data", join(dir, "data")];
    const lines = [
      { type: "turn/start", data: { turn: 1 } },
      { type: "user/message", data: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "prompt" } }, surfaceOp: "append" },
      { type: "step/start", data: { turn: 1, step: 1 } },
      { type: "step/end", data: { turn: 1, step: 1 } },
      { type: "turn/end", data: { turn: 1, reason: { kind: "completed" } } },
    ].map((l) => JSON.stringify(l) + "\n").join("");
    for (const id of ["clean", "torn", "corrupt"]) logbook([...global, "append", id], lines);
    // The session's log file, whatever format version this build writes.
    const logOf = (id) => {
      const sub = join(dir, "data", id);
      return join(sub, readdirSync(sub).find((n) => /^events\.v\d+\.jsonl$/.test(n)));
    };
    // A torn tail: half an event after the last whole one.
    appendFileSync(logOf("torn"), '{"seq":5,"time":1,"type":"tool/res');
    // Damage inside the committed log: event 2 (line 4, after the header).
    const path = logOf("corrupt");
    const l = readFileSync(path, "utf8").split("\n");
    l[3] = '{"seq":2,"time":1,"type":"step/sta';
    writeFileSync(path, l.join("\n"));
    srv = await Server.start(global);
  });
  after(async () => srv?.stop());

  test("the sessions list marks a torn tail and a corrupt log", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/");
    const state = (id) => page.locator(`tr[data-session="${id}"] [data-col="state"]`);
    await state("torn").locator(".badge.bad", { hasText: "torn" }).waitFor();
    await state("corrupt").locator(".badge.bad", { hasText: "corrupt" }).waitFor();
    await page.locator('tr[data-session="clean"] [data-col="messages"]').filter({ hasText: "1" }).waitFor();
    assert.equal(await state("clean").locator(".badge.bad").count(), 0);
    assert.equal(await page.locator('tr[data-session="torn"] [data-col="events"]').innerText(), "5");
    await screenshot(page, "damaged");
    // The torn session still opens: its valid prefix, and the warning.
    await page.click('tr[data-session="torn"] a');
    await page.locator('.row[data-seq="4"]:not(.loading)').waitFor();
    await page.locator(".facts .badge.bad", { hasText: "torn" }).waitFor();
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("sessions named . and ..", () => {
  let srv;
  const ids = [".", "..", "-"];
  before(async () => {
    const global = ["--data", join(tempDir("logbook-viewer-dots-"), "data")];
    for (const id of ids) {
      const lines = [
        { type: "turn/start", data: { turn: 1 } },
        { type: "user/message", data: { id: "u1", role: "user", content: [{ type: "text", text: `in session ${id}` }], source: { kind: "prompt" } }, surfaceOp: "append" },
      ];
      logbook([...global, "append", id], lines.map((l) => JSON.stringify(l) + "\n").join(""));
    }
    srv = await Server.start(global);
  });
  after(async () => srv?.stop());

  // The page of session id shows its own two events and its message.
  const showsSession = async (page, id) => {
    await page.locator('.row[data-seq="1"]:not(.loading)').waitFor();
    assert.equal(await page.title(), `${id} · logbook`);
    assert.match(await page.locator('[data-fact="length"]').innerText(), /2 events/);
    await page.locator('.row[data-seq="1"]').click();
    await page.locator(".msg-text").filter({ hasText: `in session ${id}` }).waitFor();
    assert.equal(await page.locator(".msg-text").count(), 1);
  };

  test("open from the list and at their routes, escaped or not, and show their events", async () => {
    const page = await newPage();
    for (const id of ids) {
      await page.goto(srv.url + "/");
      await page.locator(`tr[data-session="${id}"] [data-col="messages"]`).filter({ hasText: "1" }).waitFor();
      await page.locator(`tr[data-session="${id}"] a`).click();
      await showsSession(page, id);
    }
    await screenshot(page, "session-dash");
    for (const [route, id] of [
      ["#/sessions/.", "."],
      ["#/sessions/%2E", "."],
      ["#/sessions/..", ".."],
      ["#/sessions/%2E%2E", ".."],
      ["#/sessions/-", "-"],
    ]) {
      await page.goto(srv.url + "/" + route);
      await page.reload();
      await showsSession(page, id);
    }
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("a server with a token", () => {
  let srv;
  const token = "viewer-test-token-0123456789";
  before(async () => {
    const dir = tempDir("logbook-viewer-token-");
    const file = join(dir, "token");
    writeFileSync(file, token + "\n", { mode: 0o600 });
    srv = await Server.start(["--data", join(dir, "data")], ["--token-file", file]);
  });
  after(async () => srv?.stop());

  test("the page loads without it, asks for it once and sends it", async () => {
    assert.equal((await fetch(`${srv.url}/v1/sessions`)).status, 401);
    const r = await fetch(`${srv.url}/v1/sessions`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: '{"id":"t1"}' });
    assert.equal(r.status, 201);
    const page = await newPage();
    await page.goto(srv.url + "/");
    await page.locator("dialog.token").waitFor();
    await screenshot(page, "token");
    await page.fill("#token", token);
    await page.keyboard.press("Enter");
    await page.locator('tr[data-session="t1"]').waitFor();
    await page.reload();
    await page.locator('tr[data-session="t1"]').waitFor();
    assert.equal(await page.locator("dialog.token").count(), 0);
    await page.close();
  });
});

describe("a stored session of 100,000 messages", () => {
  let srv;
  before(async () => {
    srv = await Server.start(["--data", join(bigStore(), "data")]);
  });
  after(async () => srv?.stop());

  test("opens in at most a second and scrolls", async () => {
    const page = await newPage();
    // The list first, with its counts (each a read of the whole log), so
    // that no background work competes with the open measured below.
    await page.goto(srv.url + "/");
    await page.locator('tr[data-session="big"] [data-col="messages"]').filter({ hasText: /^\d+$/ }).waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('tr[data-session="big"] [data-col="events"]').innerText(), "266673");
    assert.equal(await page.locator('tr[data-session="big"] [data-col="messages"]').innerText(), "100002");
    const t0 = Date.now();
    await page.click('tr[data-session="big"] a');
    await page.locator('.row[data-seq="0"]:not(.loading)').waitFor();
    const ms = Date.now() - t0;
    const length = await page.locator('[data-fact="length"]').innerText();
    console.log(`100K messages (${length}): opened in ${ms} ms (page: ${await page.evaluate(() => document.body.dataset.openMs)} ms), load ${loadavg()[0].toFixed(1)}`);
    assert.match(length, /266673 events/);
    // Jump to the middle and the end; the rows arrive from the server's pages.
    for (const frac of [0.5, 1]) {
      const t1 = Date.now();
      await page.locator(".timeline").evaluate((tl, f) => (tl.scrollTop = f * tl.scrollHeight), frac);
      await page.waitForFunction(() => {
        const rows = [...document.querySelectorAll(".timeline .row")];
        return rows.length > 0 && rows.every((r) => !r.classList.contains("loading"));
      });
      console.log(`100K: scrolled to ${frac * 100}% in ${Date.now() - t1} ms`);
    }
    assert.ok((await page.locator(".timeline .row").count()) < 200, "the list is virtualized");
    // Smoothness: scroll continuously (200 px a frame for 240 frames, from
    // the middle up) and time the frames.
    const frames = await page.locator(".timeline").evaluate(async (tl) => {
      tl.scrollTop = tl.scrollHeight / 2;
      const out = [];
      let last = performance.now();
      for (let i = 0; i < 240; i++) {
        await new Promise((r) => requestAnimationFrame(r));
        const now = performance.now();
        out.push(now - last);
        last = now;
        tl.scrollTop -= 200;
      }
      return out.sort((a, b) => a - b);
    });
    const p = (q) => frames[Math.min(frames.length - 1, Math.floor(q * frames.length))].toFixed(1);
    console.log(`100K: continuous scroll, frame times p50 ${p(0.5)} ms, p95 ${p(0.95)} ms, max ${p(1)} ms (load ${loadavg()[0].toFixed(1)})`);
    // Go to a seq by number: the row is picked and in view.
    await page.fill("#seq-go", "200000");
    await page.press("#seq-go", "Enter");
    await page.locator('.row[data-seq="200000"].picked:not(.loading)').waitFor();
    await screenshot(page, "big");
    assert.deepEqual(page.errors, []);
    // One second on an idle machine. On a shared one the budget grows with
    // the 1-minute load per core, and the test says so.
    const load = loadavg()[0] / availableParallelism();
    const budget = 1000 * Math.max(1, load);
    if (budget > 1000) console.log(`100K: load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores: budget ${Math.round(budget)} ms instead of 1000 ms`);
    assert.ok(ms <= budget, `opened in ${ms} ms (budget ${Math.round(budget)} ms)`);
    await page.close();
  });
});
