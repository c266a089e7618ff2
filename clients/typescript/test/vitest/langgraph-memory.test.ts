// The same validate() against LangGraph's own MemorySaver, so that the
// counts of passed and skipped tests can be compared with LogbookSaver's.

import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { validate } from "@langchain/langgraph-checkpoint-validation";

validate<MemorySaver>({
  checkpointerName: "MemorySaver",
  createCheckpointer() {
    return new MemorySaver();
  },
});
