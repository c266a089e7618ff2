// The vitest run of the LangGraph checkpoint validation suite: its specs
// call describe, it and expect as globals.

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true,
    globalSetup: ["test/vitest/setup.ts"],
    include: ["test/vitest/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
