// The SDK's own importSessionToStore copies a Claude Code session file,
// placed in a temporary home (~/.claude/projects/<project>/<session>.jsonl,
// with a subagent's transcript and its sidecar), into the logbook store of
// a real `logbook serve`; reading it back gives the file's lines.

import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { LogbookSessionStore, sessionIdOf } from "../src/claude-agent-sdk/index.js";
import { Client } from "../src/index.js";
import { removeBin, Server } from "./serve.js";

const fixtureDir = fileURLToPath(new URL("../../test/testdata/claude-code/", import.meta.url));
const sessionUuid = "7f3c2a1e-5b4d-4c8e-9a10-2b3c4d5e6f70";
const agent = "agent-a3f9c21";

// The SDK finds ~/.claude through HOME: set before it is loaded.
const home = mkdtempSync(join(tmpdir(), "logbook-claude-home-"));
process.env["HOME"] = home;
delete process.env["CLAUDE_CONFIG_DIR"];
const { importSessionToStore } = await import("@anthropic-ai/claude-agent-sdk");

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
  rmSync(home, { recursive: true, force: true });
});

function lines(path: string): unknown[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as unknown);
}

test("importSessionToStore of a Claude Code session in a temporary home: load gives the file's lines, its subagent is a subkey, and a second import adds nothing", async () => {
  mkdirSync(join(home, "src", "invoice-parser"), { recursive: true });
  const project = realpathSync(join(home, "src", "invoice-parser"));
  // Claude Code's project folder: the path with every other character than a letter or digit as "-".
  const projectKey = project.replace(/[^a-zA-Z0-9]/g, "-");
  const dir = join(home, ".claude", "projects", projectKey);
  mkdirSync(dir, { recursive: true });
  cpSync(join(fixtureDir, `${sessionUuid}.jsonl`), join(dir, `${sessionUuid}.jsonl`));
  cpSync(join(fixtureDir, sessionUuid), join(dir, sessionUuid), { recursive: true });

  const store = new LogbookSessionStore({ client: lb });
  await importSessionToStore(sessionUuid, store, { dir: project, batchSize: 4 });

  const key = { projectKey, sessionId: sessionUuid };
  const main = lines(join(fixtureDir, `${sessionUuid}.jsonl`));
  assert.deepStrictEqual(await store.load(key), main);
  assert.deepStrictEqual(await store.listSessions(projectKey).then((l) => l.map((e) => e.sessionId)), [sessionUuid]);
  const subpath = `subagents/${agent}`;
  assert.deepStrictEqual(await store.listSubkeys(key), [subpath]);
  const meta = JSON.parse(readFileSync(join(fixtureDir, sessionUuid, "subagents", `${agent}.meta.json`), "utf8")) as object;
  const sub = [...lines(join(fixtureDir, sessionUuid, "subagents", `${agent}.jsonl`)), { type: "agent_metadata", ...meta }];
  assert.deepStrictEqual(await store.load({ ...key, subpath }), sub);

  // The import again, by another store (a new process): the lines with a
  // uuid are not stored twice; the uuid-less ones (the snapshot, the
  // summary, the sidecar) are appended again, as the SDK's docs allow.
  await importSessionToStore(sessionUuid, new LogbookSessionStore({ client: lb }), { dir: project });
  const again = (await store.load(key))!;
  const uuidLess = main.filter((l) => (l as { uuid?: string }).uuid === undefined);
  assert.deepStrictEqual(again, [...main, ...uuidLess]);
  const subAgain = (await store.load({ ...key, subpath }))!;
  assert.deepStrictEqual(subAgain, [...sub, { type: "agent_metadata", ...meta }]);

  // The typed events came along: the transcript holds both prompts.
  const prompts = (await lb.session(sessionIdOf(key)).transcript()).filter((e) => e.type === "user/message");
  assert.deepStrictEqual(prompts.map((e) => (e.message.content[0] as { text: string }).text), [
    "Add a unit test for parse_amount in invoice/utils.py; it must cover negative amounts.",
    "Run them.",
  ]);
});
