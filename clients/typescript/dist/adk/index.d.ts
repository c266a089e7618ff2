export { EVENT_TYPE, FRAMEWORK, LogbookSessionService, STATE_TYPE, keyOf } from "./service.js";
export type { LogbookSessionServiceOptions } from "./service.js";
