export { FRAMEWORK, LogbookSaver, MAX_THREAD_ID_BYTES } from "./saver.js";
export type { LogbookSaverOptions } from "./saver.js";
export { CHECKPOINT_TYPE, WRITES_TYPE } from "./records.js";
export type { Blob, ChannelBlob, CheckpointRecord, WriteRecord, WritesRecord } from "./records.js";
