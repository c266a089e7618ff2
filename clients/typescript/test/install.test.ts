// The package installs the way the root README says: in a new project in
// a temporary directory, `npm init -y` then `npm install --install-links
// <repo>/clients/typescript` (with one framework package from the registry,
// @openai/agents-core and its peer zod, at the versions package.json pins,
// --prefer-offline so the cache npm ci filled serves them). <repo> is a
// copy of this package as a fresh clone has it (no node_modules, no
// build/), so the install cannot lean on this checkout's dev dependencies.
// In the new project, tsc then type-checks a consumer of "@logbook/client"
// and of every subpath export that has a built file, and a script imports
// them, creates a session on a real `logbook serve` and appends a turn
// through the installed copy.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { removeBin, Server } from "./serve.js";

// pkgDir is clients/typescript: this file runs compiled from build/test/.
const pkgDir = fileURLToPath(new URL("../../", import.meta.url));

/** Manifest is the part of package.json the test reads. */
interface Manifest {
  exports: Record<string, { types: string; import: string }>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as Manifest;

// The framework installed beside the client, so its adapter must import.
const framework = "@openai/agents-core";
const frameworkSubpath = "./openai-agents";

// check.mjs runs in the new project: argv[2] is the server's URL. It prints
// one JSON line: where "@logbook/client" resolved, the appended and read
// events, and per subpath export either "ok" with its export names or the
// import's error code and message.
const checkScript = `
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client, events as ev } from "@logbook/client";

const out = { resolved: realpathSync(fileURLToPath(import.meta.resolve("@logbook/client"))), subpaths: {} };
const s = await new Client({ baseUrl: process.argv[2] }).create({ id: "installed" });
const model = { provider: "anthropic", name: "claude-sonnet-4" };
const appended = await s.append([ev.turnStart(1), ev.userText("u1", "hi"), ev.stepStart(1, 1),
  ev.assistantText(1, 1, "a1", model, "hello"), ev.stepEnd(1, 1), ev.turnEnd(1, ev.completed())], { expectedSeq: 0, flush: true });
out.appended = appended.map((e) => [e.seq, e.type]);
out.read = (await s.events()).map((e) => [e.seq, e.type]);
for (const sub of JSON.parse(process.argv[3])) {
  try {
    out.subpaths[sub] = { ok: Object.keys(await import("@logbook/client/" + sub)).sort() };
  } catch (err) {
    out.subpaths[sub] = { code: err.code, message: err.message };
  }
}
console.log(JSON.stringify(out));
`;

/** Checked is what check.mjs prints. */
interface Checked {
  resolved: string;
  appended: [number, string][];
  read: [number, string][];
  subpaths: Record<string, { ok?: string[]; code?: string; message?: string }>;
}

let srv: Server;
let tmp: string;

before(async () => {
  srv = await Server.start();
  tmp = mkdtempSync(join(tmpdir(), "logbook-ts-install-"));
});

after(async () => {
  await srv?.stop();
  srv?.removeData();
  removeBin();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// npm runs the child npm and node without the npm_* variables `npm test`
// sets, which would point them at this package rather than the new project.
function run(cmd: string, args: string[], cwd: string): string {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")));
  try {
    return execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

test("npm install --install-links <repo>/clients/typescript in a new project: the client and its built subpath exports import from the installed copy and append to a real serve", { timeout: 180_000 }, async () => {
  const repoPkg = join(tmp, "repo", "clients", "typescript");
  cpSync(pkgDir, repoPkg, {
    recursive: true,
    filter: (src) => !["node_modules", "build"].includes(relative(pkgDir, src).split("/")[0]!) && !src.endsWith(".tgz"),
  });
  const app = join(tmp, "app");
  mkdirSync(app);
  run("npm", ["init", "-y"], app);
  const pins = [framework, "zod"].map((p) => `${p}@${manifest.devDependencies[p]}`);
  run("npm", ["install", "--install-links", "--prefer-offline", "--no-audit", "--no-fund", repoPkg, ...pins], app);

  const installed = join(app, "node_modules", "@logbook", "client");
  assert.ok(lstatSync(installed).isDirectory(), `${installed} is a copy, not a link to the repository (--install-links)`);
  // The subpaths with a built file in the package (each adapter's lands with it).
  const built = Object.keys(manifest.exports)
    .filter((sub) => sub !== "." && existsSync(join(pkgDir, manifest.exports[sub]!.import)))
    .map((sub) => sub.slice(2));
  for (const sub of [".", ...built.map((b) => `./${b}`)]) {
    for (const f of Object.values(manifest.exports[sub]!)) assert.ok(existsSync(join(installed, f)), `the installed package has ${sub}'s ${f}`);
  }

  // A TypeScript consumer resolves the declarations of the package and of
  // every built subpath through the "types" conditions (with
  // skipLibCheck, as the frameworks' own declarations need it).
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
    compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: true, types: [] },
    files: ["consumer.mts"],
  }));
  writeFileSync(join(app, "consumer.mts"), [
    'import { Client, events as ev, type Event } from "@logbook/client";',
    'export const client: Client = new Client({ baseUrl: "http://127.0.0.1:7420" });',
    'export const input = ev.userText("u1", "hi");',
    "export type Events = Event[];",
    ...built.map((sub, i) => `export type * as Adapter${i} from "@logbook/client/${sub}";`),
  ].join("\n"));
  run("node", [join(pkgDir, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], app);

  writeFileSync(join(app, "check.mjs"), checkScript);
  const got = JSON.parse(run("node", ["check.mjs", srv.url, JSON.stringify(built)], app)) as Checked;

  assert.equal(got.resolved, realpathSync(join(installed, "dist", "index.js")), '"@logbook/client" resolves to the installed copy');
  const want: [number, string][] = [[0, "turn/start"], [1, "user/message"], [2, "step/start"], [3, "assistant/message"], [4, "step/end"], [5, "turn/end"]];
  assert.deepEqual(got.appended, want);
  assert.deepEqual(got.read, want, "the server holds the appended turn");
  for (const sub of built) {
    const r = got.subpaths[sub]!;
    if (`./${sub}` === frameworkSubpath || r.ok) {
      assert.ok(r.ok && r.ok.length > 0, `@logbook/client/${sub} imports and exports something: ${JSON.stringify(r)}`);
      continue;
    }
    // An adapter whose framework is not installed may fail only for want of
    // one of the optional peers package.json declares.
    assert.equal(r.code, "ERR_MODULE_NOT_FOUND", `@logbook/client/${sub}: ${r.message}`);
    const peer = /Cannot find package '([^']+)'/.exec(r.message ?? "")?.[1];
    assert.ok(peer && peer in manifest.peerDependencies, `@logbook/client/${sub} needs only declared peer dependencies: ${r.message}`);
  }
});
