export { FRAMEWORK, LogbookSessionStore, sessionIdOf } from "./store.js";
export type { LogbookSessionStoreOptions } from "./store.js";
export { ENTRY_TYPE } from "./transcript.js";
