// A benchmark of the viewer on a big session, in a real browser against a
// real `logbook serve` (not a test: it asserts nothing and prints times):
// opening "What the model saw" at a seq with 7,599 messages, and the
// provenance tree of a checkpoint that replaced about 8,000 nodes (the
// store of harness.checkpointStore). Each is the time from the navigation
// or the click to the list or the tree on screen, the median of RUNS runs
// (default 3).
//
//	LOGBOOK_TEST_BIN=/path/to/logbook node test/bench.mjs

import { browser, checkpointSeq, checkpointStore, cleanup, Server } from "./harness.mjs";

const runs = Number(process.env.RUNS ?? 3);
const srv = await Server.start(["--config", await checkpointStore()]);
const ctx = await browser();
try {
  const cp = await checkpointSeq(srv.url);
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const list = [];
  const tree = [];
  for (let i = 0; i < runs; i++) {
    const page = await ctx.newPage();
    let t0 = Date.now();
    await page.goto(`${srv.url}/#/sessions/cp?seq=20263`);
    await page.locator("#msg-count").waitFor({ timeout: 120_000 });
    await page.locator("ol.messages > li").first().waitFor();
    list.push(Date.now() - t0);
    await page.goto(`${srv.url}/#/sessions/cp?seq=${cp}`);
    await page.reload();
    await page.locator("#msg-count").waitFor({ timeout: 120_000 });
    t0 = Date.now();
    await page.click("#tab-why");
    await page.locator("ul.why li").first().waitFor({ timeout: 120_000 });
    tree.push(Date.now() - t0);
    await page.close();
  }
  console.log(`7,599 messages at seq 20263: list on screen in ${median(list)} ms (runs: ${list.join(", ")})`);
  console.log(`provenance of checkpoint seq ${cp}: tree on screen in ${median(tree)} ms (runs: ${tree.join(", ")})`);
} finally {
  await ctx.close();
  await srv.stop();
  cleanup();
}
