// The browser tests' harness: the logbook binary (LOGBOOK_TEST_BIN, or
// built once), real `logbook serve` processes over real stores (the demo's,
// the 100,000-message session's, an empty one), and Debian's Chromium
// driven by playwright-core with a new, empty profile.

import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
import { chromium } from "playwright-core";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Where the screenshots go (gitignored); LOGBOOK_VIEWER_ARTIFACTS moves them. */
export const artifacts = process.env.LOGBOOK_VIEWER_ARTIFACTS ?? fileURLToPath(new URL("../test-artifacts/", import.meta.url));

/** The Chromium the tests drive; LOGBOOK_CHROMIUM overrides Debian's. */
export const chromiumPath = process.env.LOGBOOK_CHROMIUM ?? "/usr/bin/chromium";

const scratch = [];

/** A directory removed by cleanup. */
export function tempDir(prefix) {
  const d = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(d);
  return d;
}

let bin;

/** The logbook binary: LOGBOOK_TEST_BIN, or built once into a temporary directory. */
export function logbookBin() {
  if (!bin) {
    bin = process.env.LOGBOOK_TEST_BIN;
    if (!bin) {
      bin = join(tempDir("logbook-viewer-bin-"), "logbook");
      execFileSync("go", ["build", "-o", bin, "./cmd/logbook"], { cwd: repoRoot, stdio: "inherit" });
    }
  }
  return bin;
}

/** Runs the logbook binary to completion, returning its stdout. */
export function logbook(args, input) {
  return execFileSync(logbookBin(), args, { input, encoding: "utf8", stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], maxBuffer: 64 << 20 });
}

/** The demo's store (`logbook demo`): the config to serve it with. */
export function demoStore() {
  const dir = join(tempDir("logbook-viewer-demo-"), "demo");
  logbook(["demo", "--data", dir]);
  return join(dir, "demo.hcl");
}

/**
 * The data directory of a store holding session "big": 100,000 messages
 * (266,673 events) of internal/corpus's long session, written once by
 * viewer/internal/bigsession and `logbook import`, and kept under the
 * temporary directory for later runs (LOGBOOK_VIEWER_BIG names another).
 */
export function bigStore() {
  const dir = process.env.LOGBOOK_VIEWER_BIG ?? join(tmpdir(), "logbook-viewer-big-v1");
  if (existsSync(join(dir, "complete"))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exp = join(dir, "big.export.jsonl");
  execFileSync("go", ["run", "./viewer/internal/bigsession", "-id", "big", "-messages", "100000", exp], { cwd: repoRoot, stdio: "inherit" });
  logbook(["--data", join(dir, "data"), "import", exp]);
  rmSync(exp);
  writeFileSync(join(dir, "complete"), "");
  return dir;
}

/**
 * The config of a store holding session "cp": 8,100 messages of
 * internal/corpus's long session (21,601 events), then a compaction of
 * seqs 1 … 21,598 (its last tool result) by the extractive summarizer, whose checkpoint replaced
 * about 8,000 surface nodes. Written once, by viewer/internal/bigsession,
 * `logbook import` and a real serve's POST …/compact, and kept under the
 * temporary directory for later runs.
 */
export async function checkpointStore() {
  const dir = join(tmpdir(), "logbook-viewer-checkpoint-v1");
  const cfg = join(dir, "cp.hcl");
  if (existsSync(join(dir, "complete"))) return cfg;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(cfg, 'data_dir = "data"\npersistence "jsonl" {}\ncompaction {\n  summarizer = "compactor-summary"\n}\nplugin "compactor-summary" {\n  config {\n    mode = "extractive"\n  }\n}\n');
  const exp = join(dir, "cp.export.jsonl");
  execFileSync("go", ["run", "./viewer/internal/bigsession", "-id", "cp", "-messages", "8100", exp], { cwd: repoRoot, stdio: "inherit" });
  logbook(["--config", cfg, "import", exp]);
  rmSync(exp);
  const srv = await Server.start(["--config", cfg]);
  try {
    const { length } = await (await fetch(`${srv.url}/v1/sessions/cp`)).json();
    const r = await fetch(`${srv.url}/v1/sessions/cp/compact`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ startSeq: 1, endSeq: length - 3 }) }); // the last tool result, the last surface node
    if (r.status !== 200) throw new Error(`compact: ${r.status} ${await r.text()}`);
  } finally {
    await srv.stop();
  }
  writeFileSync(join(dir, "complete"), "");
  return cfg;
}

/** The seq of the checkpoint of session "cp" (checkpointStore) served at url: its compaction's user/message, near the log's end. */
export async function checkpointSeq(url) {
  const { length } = await (await fetch(`${url}/v1/sessions/cp`)).json();
  const tail = await (await fetch(`${url}/v1/sessions/cp/events?from=${length - 8}`, { headers: { Accept: "application/x-ndjson" } })).text();
  return tail.trim().split("\n").map((l) => JSON.parse(l)).find((e) => e.data?.source?.kind === "compact-checkpoint").seq;
}

/** A running `logbook serve`. */
export class Server {
  constructor(proc, url) {
    this.proc = proc;
    this.url = url;
  }

  /** Starts serve with the given global args (--config or --data) on a free loopback port. */
  static async start(global, extra = []) {
    const proc = spawn(logbookBin(), [...global, "serve", "--addr", "127.0.0.1:0", ...extra], { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`logbook serve did not listen within 20 s:\n${log}`)), 20_000);
      proc.stderr.on("data", (b) => {
        log += b.toString();
        const m = /logbook serve: listening on (\S+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(`http://${m[1]}`);
        }
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`logbook serve exited (${code}):\n${log}`));
      });
    });
    const s = new Server(proc, url);
    s.exited = new Promise((resolve) => proc.once("exit", resolve));
    return s;
  }

  /** Stops the server (SIGTERM) and waits for it. */
  async stop() {
    this.proc.kill("SIGTERM");
    await this.exited;
  }
}

/** Chromium, headless, with a new empty profile and the extra command-line args. */
export async function browser(extra = []) {
  if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (or set LOGBOOK_CHROMIUM)`);
  const profile = tempDir("logbook-viewer-profile-");
  return chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic", ...extra],
  });
}

/**
 * A new page of the browser context ctx that keeps its errors in
 * page.errors: uncaught exceptions and console errors. Chromium logs every
 * answer ≥ 400 as a console error ("Failed to load resource"); the viewer
 * asks for optional routes a server may lack and request shapes a seq may
 * not have, so those are not errors here.
 */
export async function errorPage(ctx) {
  const page = await ctx.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && !m.text().startsWith("Failed to load resource") && page.errors.push(m.text()));
  return page;
}

/**
 * Registers the calling test file's hooks: before its tests, one Chromium
 * (browser); after them, its closing and cleanup. Returns the function
 * that opens a new page of it (errorPage).
 */
export function pages() {
  let ctx;
  before(async () => {
    ctx = await browser();
  });
  after(async () => {
    await ctx?.close();
    cleanup();
  });
  return () => errorPage(ctx);
}

/** Saves a screenshot of page as name.png in the artifacts directory and prints where. */
export async function screenshot(page, name) {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path });
  console.log(`screenshot: ${path}`);
  return path;
}

/** Removes the temporary directories. */
export function cleanup() {
  for (const d of scratch.splice(0)) rmSync(d, { recursive: true, force: true });
}
