// @langchain/langgraph-checkpoint-validation's validate() against
// LogbookSaver over a real `logbook serve` (test/serve.ts). Every
// checkpointer the suite asks for gets a scope of its own, so that a list
// without a thread id sees only what that checkpointer stored.

import { validate } from "@langchain/langgraph-checkpoint-validation";

import { Client } from "../../src/index.js";
import { LogbookSaver } from "../../src/langgraph/index.js";
import { Server } from "../serve.js";

let srv: Server | undefined;
let client: Client;
let scopes = 0;

validate<LogbookSaver>({
  checkpointerName: "LogbookSaver",
  beforeAllTimeout: 120_000,
  async beforeAll() {
    srv = await Server.start();
    client = new Client({ baseUrl: srv.url });
  },
  async afterAll() {
    await srv?.stop();
    srv?.removeData();
  },
  createCheckpointer() {
    return new LogbookSaver({ client, scope: `validate-${++scopes}` });
  },
  async destroyCheckpointer(saver) {
    for (const thread of await saver.threadIds()) await saver.deleteThread(thread);
  },
});
