// "What the model saw" in a real browser (Debian's Chromium through
// playwright-core) against real `logbook serve` processes: landing on a
// session with no request/header and on one with headers (no error pane,
// the request only where a header exists, the server's request shapes kept
// after an error, long text expanding in place, JSON strings with their
// line breaks), and a big session (a 7,600-message list and the provenance
// of a checkpoint that replaced 8,000 nodes, both drawn lazily).

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { checkpointSeq, checkpointStore, logbook, pages, Server, screenshot, tempDir } from "./harness.mjs";

/** A new page whose console errors fail the test that reads them. */
const newPage = pages();

/** The long text of the tool result: 40 lines. */
const longText = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the listing`).join("\n");

/**
 * One turn of the agent loop: a user message, a step whose assistant
 * message calls a tool, the call and its result, the step's and the turn's
 * ends; with a request/header in the step when header is given.
 */
function turn(n, header) {
  const call = `call-${n}`;
  const args = JSON.stringify({ path: `file${n}.txt` });
  return [
    { type: "turn/start", data: { turn: n } },
    { type: "user/message", data: { id: `u${n}`, role: "user", content: [{ type: "text", text: `read file${n}.txt` }], source: { kind: "prompt" } }, surfaceOp: "append" },
    { type: "step/start", data: { turn: n, step: 1 } },
    header ? { type: "request/header", data: { header, reason: n === 1 ? "initial" : "resume" } } : null,
    {
      type: "assistant/message",
      data: {
        turn: n,
        step: 1,
        message: { id: `a${n}`, role: "assistant", content: [{ type: "text", text: "Reading it." }, { type: "tool-call", id: call, name: "read_file", arguments: args }], source: { kind: "model", provider: "mock", model: "mock-1" } },
        stream: [],
      },
      surfaceOp: "append",
    },
    { type: "tool/call", data: { turn: n, step: 1, callId: call, name: "read_file", arguments: args } },
    { type: "tool/result", data: { turn: n, step: 1, message: { id: `r${n}`, role: "tool", toolCallId: call, content: [{ type: "text", text: longText }], source: { kind: "tool", callId: call } } }, surfaceOp: "append" },
    { type: "step/end", data: { turn: n, step: 1 } },
    { type: "turn/end", data: { turn: n, reason: { kind: "completed" } } },
  ].filter(Boolean);
}

const header = { config: { provider: "mock", model: "mock-1", maxTokens: 1024 }, tools: [{ name: "read_file", description: "Reads a file", inputSchema: { type: "object", properties: { path: { type: "string" } } } }] };

describe("landing", () => {
  let srv;
  before(async () => {
    const global = ["--data", join(tempDir("logbook-viewer-saw-"), "data")];
    const ndjson = (evs) => evs.map((e) => JSON.stringify(e) + "\n").join("");
    logbook([...global, "append", "plain"], ndjson(turn(1)));
    logbook([...global, "append", "headed"], ndjson([...turn(1, header), ...turn(2, header)]));
    srv = await Server.start(global);
  });
  after(async () => srv?.stop());

  /** The seq of the first event of type in session id. */
  const seqOf = async (id, type, nth = 0) => {
    const text = await (await fetch(`${srv.url}/v1/sessions/${id}/events?from=0`, { headers: { Accept: "application/x-ndjson" } })).text();
    return text.trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.type === type)[nth].seq;
  };

  test("a header-less session opens on its messages at seq 0 and at its end, with no error and no request", async () => {
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/plain");
    await page.locator("#msg-count").waitFor();
    await page.locator(".no-request").waitFor();
    assert.equal(await page.locator("#msg-count").innerText(), "0 messages");
    assert.equal(await page.locator(".panel-body .error").count(), 0);
    assert.equal(await page.locator(".formats button").count(), 0);
    await screenshot(page, "saw-plain-0");
    // At its last event: the three messages, still no request.
    const last = (await (await fetch(`${srv.url}/v1/sessions/plain`)).json()).length - 1;
    await page.goto(srv.url + `/#/sessions/plain?seq=${last}`);
    await page.reload();
    await page.locator("#msg-count").filter({ hasText: "3 messages" }).waitFor();
    await page.locator(".no-request").waitFor();
    assert.deepEqual(await page.locator("ol.messages > li").evaluateAll((l) => l.map((li) => li.querySelector(".role").textContent)), ["user", "assistant", "tool"]);
    assert.equal(await page.locator(".panel-body .error").count(), 0);
    assert.equal(await page.locator(".formats button").count(), 0);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("a session with headers: the request from its header on, in every shape the server names, kept after an error", async () => {
    // The shapes the server offers: it names them when asked for one it does not know.
    const usage = await (await fetch(`${srv.url}/v1/sessions/headed/request?format=-`)).json();
    assert.equal(usage.code, "USAGE");
    const formats = /is not one of (.*)$/.exec(usage.detail)[1].split(", ");
    assert.ok(formats.includes("openai") && formats.includes("anthropic"), usage.detail);
    const page = await newPage();
    await page.goto(srv.url + "/#/sessions/headed?seq=0");
    await page.locator("#msg-count").filter({ hasText: "0 messages" }).waitFor();
    await page.locator(".no-request").waitFor();
    assert.equal(await page.locator(".panel-body .error").count(), 0);
    // Inside turn 1's step, the call announced and not answered: the
    // request in logbook's shape; a provider's shape may refuse it
    // (TOOL_CALLS_PENDING), and its buttons stay.
    const pending = await seqOf("headed", "tool/call");
    await page.locator("#seq-go").fill(String(pending));
    await page.press("#seq-go", "Enter");
    await page.locator("#msg-count").filter({ hasText: "2 messages" }).waitFor();
    await page.locator("#request-json").filter({ hasText: "mock-1" }).waitFor();
    assert.deepEqual(await page.locator(".formats button").evaluateAll((b) => b.map((x) => x.dataset.format)), formats);
    for (const f of formats) {
      await page.click(`.formats button[data-format="${f}"]`);
      const direct = await fetch(`${srv.url}/v1/sessions/headed/request?at=${pending}&format=${f}`);
      if (direct.ok) await page.locator("#request-json:visible").waitFor();
      else await page.locator(".request-error:visible").filter({ hasText: (await direct.json()).code }).waitFor();
      assert.equal(await page.locator(".formats button").count(), formats.length, `after ${f}`);
      assert.equal(await page.locator(".formats button[aria-pressed=true]").innerText(), f);
    }
    await screenshot(page, "saw-headed-pending");
    // At the end: every shape renders; OpenAI's from the remembered pick.
    await page.click('.formats button[data-format="openai"]');
    const last = (await (await fetch(`${srv.url}/v1/sessions/headed`)).json()).length - 1;
    await page.locator("#seq-go").fill(String(last));
    await page.press("#seq-go", "Enter");
    await page.locator("#msg-count").filter({ hasText: "6 messages" }).waitFor();
    await page.locator("#request-json").filter({ hasText: '"tool_calls"' }).waitFor();
    assert.equal(await page.locator(".request-error:visible").count(), 0);
    // Long text expands in place; the row grows and the next one moves down.
    const tool = page.locator('ol.messages > li[data-index="2"]');
    const next = page.locator('ol.messages > li[data-index="3"]');
    const before = await next.evaluate((li) => li.offsetTop);
    assert.doesNotMatch(await tool.locator(".msg-text").innerText(), /line 40 of/);
    await tool.locator("button.more").click();
    await tool.locator(".msg-text").filter({ hasText: "line 40 of the listing" }).waitFor();
    assert.equal(await tool.getAttribute("class"), "msg role-tool expanded");
    assert.ok((await next.evaluate((li) => li.offsetTop)) > before + 200, "the rows after an expanded message move down");
    // JSON strings show their line breaks: the event's text, line by line.
    await page.locator("#seq-go").fill(await tool.getAttribute("data-seq"));
    await page.press("#seq-go", "Enter");
    await page.click("#tab-event");
    const json = page.locator(".panel-body pre.json");
    await json.filter({ hasText: "line 40 of the listing" }).waitFor();
    const text = await json.innerText();
    assert.match(text, /line 1 of the listing\nline 2 of the listing/);
    assert.doesNotMatch(text, /\\n/);
    await screenshot(page, "saw-headed-event");
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("a big session", () => {
  let srv;
  before(async () => {
    srv = await Server.start(["--config", await checkpointStore()]);
  });
  after(async () => srv?.stop());

  test("7,600 messages: only the messages in view are drawn, as the list scrolls", async () => {
    const page = await newPage();
    // Seq 20,266 ends turn 2,533: 7,599 messages (3 a turn) are on the surface.
    await page.goto(srv.url + "/#/sessions/cp?seq=20263");
    await page.locator("#msg-count").filter({ hasText: /^\d+ messages$/ }).waitFor({ timeout: 60_000 });
    const n = Number((await page.locator("#msg-count").innerText()).split(" ")[0]);
    assert.ok(n >= 7590 && n <= 7610, `${n} messages`);
    const box = page.locator(".messages-box");
    const bound = async () => {
      const h = await box.evaluate((b) => b.clientHeight);
      return Math.ceil(h / 64) + 1 + 2 * 8; // in view, plus the overscan above and below
    };
    const drawn = () => page.locator("ol.messages > li").count();
    assert.ok((await drawn()) <= (await bound()), `${await drawn()} drawn`);
    assert.equal(await page.locator("ol.messages").getAttribute("data-count"), String(n));
    // Scrolled to the middle and to the end, the rows there are drawn, and only those.
    for (const frac of [0.5, 1]) {
      // The message at the top of the view after the scroll (64 px a message).
      const want = await box.evaluate((b, f) => {
        b.scrollTop = f * b.scrollHeight;
        return Math.floor(b.scrollTop / 64);
      }, frac);
      assert.ok(want >= Math.floor(frac * n) - 20, `scrolled to message ${want} of ${n}`);
      await page.waitForFunction((i) => document.querySelector(`ol.messages > li[data-index="${i}"]`), want, { timeout: 60_000 }).catch(async (err) => {
        const state = await box.evaluate((b) => ({ scrollTop: b.scrollTop, clientHeight: b.clientHeight, drawn: [...b.querySelectorAll("li")].map((li) => Number(li.dataset.index)) }));
        throw new Error(`message ${want} not drawn: ${JSON.stringify(state)}`, { cause: err });
      });
      assert.ok((await drawn()) <= (await bound()), `${await drawn()} drawn at ${frac}`);
    }
    await screenshot(page, "saw-big-list");
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("the provenance of a checkpoint that replaced 8,000 nodes: a page of sources, more on expand", async () => {
    const cp = await checkpointSeq(srv.url);
    const want = await (await fetch(`${srv.url}/v1/sessions/cp/why?seq=${cp}`)).json();
    const summary = want.derivedFrom.find((k) => k.type === "compaction/summary");
    assert.ok(summary.derivedFrom.length >= 8000, `${summary.derivedFrom.length} sources`);
    const page = await newPage();
    await page.goto(srv.url + `/#/sessions/cp?seq=${cp}`);
    await page.click("#tab-why");
    const tree = page.locator(`ul.why[aria-label="Provenance of seq ${cp}"]`);
    await tree.waitFor({ timeout: 60_000 });
    const items = () => tree.locator("li[data-seq]").count();
    // The root and a page of its sources; the summary's own sources not drawn.
    assert.ok((await items()) <= 1 + 100, `${await items()} drawn`);
    const node = tree.locator(`li[data-seq="${summary.seq}"]`);
    assert.equal(await node.getAttribute("aria-expanded"), "false");
    assert.equal(await node.locator("li").count(), 0);
    // Expanding it draws its first page, and "more" the next.
    await node.locator("button.toggle").first().click();
    assert.equal(await node.getAttribute("aria-expanded"), "true");
    assert.equal(await node.locator(":scope > ul > li[data-seq]").count(), 100);
    assert.deepEqual(
      await node.locator(":scope > ul > li[data-seq]").evaluateAll((l) => l.slice(0, 3).map((li) => Number(li.dataset.seq))),
      summary.derivedFrom.slice(0, 3).map((k) => k.seq),
    );
    await node.locator(":scope > ul > li.why-more button").click();
    assert.equal(await node.locator(":scope > ul > li[data-seq]").count(), 200);
    await screenshot(page, "saw-big-why");
    // Collapsing it takes its sources out again.
    await node.locator("button.toggle").first().click();
    assert.equal(await node.locator("li").count(), 0);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
