// The log-only records the LangGraph saver writes, and the fold that reads
// a thread's session back into checkpoints, channel blobs, pending writes
// and the agent-loop state its typed events continue from.

import type { Event, Input } from "../events.js";
import { rawJSON, type JSONValue } from "../json.js";

/** The event type of a stored checkpoint (docs/format.md, "Ignorable,
 * unknown and plugin types": an ignorable type logbook keeps verbatim and
 * never interprets). */
export const CHECKPOINT_TYPE = "langgraph/checkpoint";

/** The event type of the pending writes of one task against a checkpoint. */
export const WRITES_TYPE = "langgraph/writes";

/** One serialized value as the serializer made it: JSON text kept as JSON
 * (readable in `logbook events`, and byte for byte the serializer's output),
 * or any other bytes in base64. */
export type Blob = { type: string; json: JSONValue } | { type: string; base64: string };

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
export function encodeBlob([type, bytes]: [string, Uint8Array], asJSON: boolean): Blob {
  if (asJSON && type === "json") {
    try {
      return { type, json: rawJSON(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
    } catch {
      // not UTF-8: base64 below
    }
  }
  return { type, base64: Buffer.from(bytes).toString("base64") };
}

/** blobBytes returns what loadsTyped takes for a stored Blob: the JSON text
 * or the decoded bytes. */
export function blobBytes(b: Blob): string | Uint8Array {
  if ("base64" in b) return new Uint8Array(Buffer.from(b.base64, "base64"));
  return JSON.stringify(b.json);
}

/** checkpointInput is the langgraph/checkpoint event of r. */
export function checkpointInput(r: CheckpointRecord): Input<unknown> {
  return { type: CHECKPOINT_TYPE, data: r, ignorable: true };
}

/** writesInput is the langgraph/writes event of r. */
export function writesInput(r: WritesRecord): Input<unknown> {
  return { type: WRITES_TYPE, data: r, ignorable: true };
}

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
export class Thread {
  /** The log length folded. */
  length = 0;
  /** The last envelope folded, to tell that the log is still the one folded. */
  last: string | undefined;
  /** The log may hold events after length that were not folded (an append was a replay). */
  stale = false;
  /** Namespace → checkpoint id → checkpoint; a later put of an id wins. */
  readonly checkpoints = new Map<string, Map<string, StoredCheckpoint>>();
  /** Namespace → checkpoint id → "taskId,idx" → write. */
  readonly writes = new Map<string, Map<string, Map<string, StoredWrite>>>();
  readonly loop: LoopState = { openTurn: null, lastTurn: 0, openStep: null, lastStep: 0, pending: [], recorded: new Set() };

  /** add folds the next event of the log. */
  add(ev: Event): void {
    this.length = ev.seq + 1;
    this.last = ev.envelope;
    const l = this.loop;
    const d = ev.data as Record<string, unknown>;
    switch (ev.type) {
      case CHECKPOINT_TYPE:
        this.#addCheckpoint(d as unknown as CheckpointRecord);
        break;
      case WRITES_TYPE:
        this.#addWrites(d as unknown as WritesRecord);
        break;
      case "turn/start":
        l.openTurn = d["turn"] as number;
        l.lastTurn = l.openTurn;
        l.openStep = null;
        l.lastStep = 0;
        l.pending = [];
        break;
      case "turn/end":
        l.openTurn = null;
        l.openStep = null;
        l.pending = [];
        break;
      case "step/start":
        l.openStep = d["step"] as number;
        l.lastStep = l.openStep;
        l.pending = [];
        break;
      case "step/end":
        l.openStep = null;
        l.pending = [];
        break;
      case "user/message":
        l.recorded.add(d["id"] as string);
        break;
      case "system/message":
      case "developer/message":
        l.recorded.add((d["message"] as { id: string }).id);
        break;
      case "assistant/message": {
        const m = d["message"] as { id: string; content: { type: string; id?: string }[] };
        l.recorded.add(m.id);
        for (const b of m.content) if (b.type === "tool-call") l.pending.push(b.id!);
        break;
      }
      case "tool/result": {
        const m = d["message"] as { id: string; toolCallId: string };
        l.recorded.add(m.id);
        if (ev.surfaceOp === "append") l.pending = l.pending.filter((c) => c !== m.toolCallId);
        break;
      }
    }
  }

  #addCheckpoint(r: CheckpointRecord): void {
    let byId = this.checkpoints.get(r.ns);
    if (!byId) this.checkpoints.set(r.ns, (byId = new Map()));
    const blobs = new Map<string, Blob | null>();
    for (const b of r.blobs) blobs.set(blobKey(b.channel, b.version), b.value ?? null);
    byId.set(r.id, { id: r.id, parentId: r.parentId, checkpoint: r.checkpoint, metadata: r.metadata, blobs });
  }

  // addWrites keeps the first write of a (task, idx) with idx ≥ 0 and the
  // last of a special one (negative idx), as MemorySaver does.
  #addWrites(r: WritesRecord): void {
    let byCheckpoint = this.writes.get(r.ns);
    if (!byCheckpoint) this.writes.set(r.ns, (byCheckpoint = new Map()));
    let byKey = byCheckpoint.get(r.checkpointId);
    if (!byKey) byCheckpoint.set(r.checkpointId, (byKey = new Map()));
    for (const w of r.writes) {
      const key = `${r.taskId},${w.idx}`;
      if (w.idx >= 0 && byKey.has(key)) continue;
      byKey.set(key, { taskId: r.taskId, idx: w.idx, channel: w.channel, taskPath: r.taskPath, value: w.value });
    }
  }

  /** blob returns the value of channel at version for checkpoint id of
   * namespace ns: stored by the checkpoint or its nearest ancestor that
   * stored that version (channel versions count per branch, so two
   * branches of a thread may each store one); undefined when none did,
   * null when the channel was empty. */
  blob(ns: string, id: string, channel: string, version: number | string): Blob | null | undefined {
    const byId = this.checkpoints.get(ns);
    const key = blobKey(channel, version);
    for (let cp = byId?.get(id), n = 0; cp && n <= byId!.size; cp = cp.parentId === undefined ? undefined : byId!.get(cp.parentId), n++) {
      const b = cp.blobs.get(key);
      if (b !== undefined) return b;
    }
    return undefined;
  }
}

function blobKey(channel: string, version: number | string): string {
  return JSON.stringify([channel, version]);
}
