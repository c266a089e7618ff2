// vitest's global setup: the logbook binary of test/serve.ts (LOGBOOK_TEST_BIN,
// or built once here) is handed to every test file through
// LOGBOOK_TEST_BIN, so that the files do not each build it; the build is
// removed at the end.

import { logbookBin, removeBin } from "../serve.js";

/** setup makes sure LOGBOOK_TEST_BIN names a logbook binary. */
export function setup(): void {
  process.env["LOGBOOK_TEST_BIN"] = logbookBin();
}

/** teardown removes the binary setup built, if it built one. */
export function teardown(): void {
  removeBin();
}
