import type { Event, Input } from "../events.js";
import { type JSONValue } from "../json.js";
/** The event type of a stored checkpoint (docs/format.md, "Ignorable,
 * unknown and plugin types": an ignorable type logbook keeps verbatim and
 * never interprets). */
export declare const CHECKPOINT_TYPE = "langgraph/checkpoint";
/** The event type of the pending writes of one task against a checkpoint. */
export declare const WRITES_TYPE = "langgraph/writes";
/** One serialized value as the serializer made it: JSON text kept as JSON
 * (readable in `logbook events`, and byte for byte the serializer's output),
 * or any other bytes in base64. */
export type Blob = {
    type: string;
    json: JSONValue;
} | {
    type: string;
    base64: string;
};
/** One channel value stored with the checkpoint that changed it; value is
 * absent when the channel was empty at that version. */
export interface ChannelBlob {
    channel: string;
    version: number | string;
    value?: Blob;
}
/** The data of a langgraph/checkpoint event. */
export interface CheckpointRecord {
    ns: string;
    id: string;
    parentId?: string;
    /** The checkpoint without its channel values, which are in blobs. */
    checkpoint: Blob;
    metadata: Blob;
    blobs: ChannelBlob[];
}
/** One write of a langgraph/writes event; idx is its index in the call, or
 * the negative index WRITES_IDX_MAP gives a special channel. */
export interface WriteRecord {
    idx: number;
    channel: string;
    value: Blob;
}
/** The data of a langgraph/writes event. */
export interface WritesRecord {
    ns: string;
    checkpointId: string;
    taskId: string;
    taskPath: string;
    writes: WriteRecord[];
}
/** encodeBlob turns the serializer's output into a Blob: JSON text as
 * JSON (sent verbatim) when asJSON and the bytes are UTF-8, else base64. */
export declare function encodeBlob([type, bytes]: [string, Uint8Array], asJSON: boolean): Blob;
/** blobBytes returns what loadsTyped takes for a stored Blob: the JSON text
 * or the decoded bytes. */
export declare function blobBytes(b: Blob): string | Uint8Array;
/** checkpointInput is the langgraph/checkpoint event of r. */
export declare function checkpointInput(r: CheckpointRecord): Input<unknown>;
/** writesInput is the langgraph/writes event of r. */
export declare function writesInput(r: WritesRecord): Input<unknown>;
/** A stored checkpoint as the fold keeps it. */
export interface StoredCheckpoint {
    id: string;
    parentId: string | undefined;
    checkpoint: Blob;
    metadata: Blob;
    /** The channel values it stored, by channel and version. */
    blobs: Map<string, Blob | null>;
}
/** A stored write as the fold keeps it. */
export interface StoredWrite {
    taskId: string;
    idx: number;
    channel: string;
    taskPath: string;
    value: Blob;
}
/** The agent-loop state of the log (docs/format.md, "The agent-loop
 * protocol") and the message ids its typed events hold. */
export interface LoopState {
    openTurn: number | null;
    lastTurn: number;
    openStep: number | null;
    lastStep: number;
    /** The call ids the open step announced and no result answered yet, in order. */
    pending: string[];
    /** The ids of the messages the typed events hold. */
    recorded: Set<string>;
}
/** Thread is what a thread's session folds to. */
export declare class Thread {
    #private;
    /** The log length folded. */
    length: number;
    /** The last envelope folded, to tell that the log is still the one folded. */
    last: string | undefined;
    /** The log may hold events after length that were not folded (an append was a replay). */
    stale: boolean;
    /** Namespace → checkpoint id → checkpoint; a later put of an id wins. */
    readonly checkpoints: Map<string, Map<string, StoredCheckpoint>>;
    /** Namespace → checkpoint id → "taskId,idx" → write. */
    readonly writes: Map<string, Map<string, Map<string, StoredWrite>>>;
    readonly loop: LoopState;
    /** add folds the next event of the log. */
    add(ev: Event): void;
    /** blob returns the value of channel at version for checkpoint id of
     * namespace ns: stored by the checkpoint or its nearest ancestor that
     * stored that version (channel versions count per branch, so two
     * branches of a thread may each store one); undefined when none did,
     * null when the channel was empty. */
    blob(ns: string, id: string, channel: string, version: number | string): Blob | null | undefined;
}
