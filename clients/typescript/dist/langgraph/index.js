// Subpath @logbook/client/langgraph: a LangGraph checkpoint saver backed by logbook.
export { FRAMEWORK, LogbookSaver, MAX_THREAD_ID_BYTES } from "./saver.js";
export { CHECKPOINT_TYPE, WRITES_TYPE } from "./records.js";
