// vitest's global setup: test/serve.ts builds the logbook binary relative
// to its compiled place (build/test/), which a test vitest runs from source
// is not; so without LOGBOOK_TEST_BIN the binary is built here, once, for
// every test file, and removed at the end.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

let dir: string | undefined;

/** setup builds the binary into a temporary directory unless LOGBOOK_TEST_BIN names one. */
export function setup(): void {
  if (process.env["LOGBOOK_TEST_BIN"]) return;
  dir = mkdtempSync(join(tmpdir(), "logbook-vitest-bin-"));
  const bin = join(dir, "logbook");
  execFileSync("go", ["build", "-o", bin, "./cmd/logbook"], { cwd: fileURLToPath(new URL("../../../../", import.meta.url)), stdio: "inherit" });
  process.env["LOGBOOK_TEST_BIN"] = bin;
}

/** teardown removes the binary setup built. */
export function teardown(): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
