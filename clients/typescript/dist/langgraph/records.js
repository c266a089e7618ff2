// The log-only records the LangGraph saver writes, and the fold that reads
// a thread's session back into checkpoints, channel blobs, pending writes
// and the agent-loop state its typed events continue from.
import { rawJSON } from "../json.js";
/** The event type of a stored checkpoint (docs/format.md, "Ignorable,
 * unknown and plugin types": an ignorable type logbook keeps verbatim and
 * never interprets). */
export const CHECKPOINT_TYPE = "langgraph/checkpoint";
/** The event type of the pending writes of one task against a checkpoint. */
export const WRITES_TYPE = "langgraph/writes";
/** encodeBlob turns the serializer's output into a Blob: JSON text as
 * JSON (sent verbatim) when asJSON and the bytes are UTF-8, else base64. */
export function encodeBlob([type, bytes], asJSON) {
    if (asJSON && type === "json") {
        try {
            return { type, json: rawJSON(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
        }
        catch {
            // not UTF-8: base64 below
        }
    }
    return { type, base64: Buffer.from(bytes).toString("base64") };
}
/** blobBytes returns what loadsTyped takes for a stored Blob: the JSON text
 * or the decoded bytes. */
export function blobBytes(b) {
    if ("base64" in b)
        return new Uint8Array(Buffer.from(b.base64, "base64"));
    return JSON.stringify(b.json);
}
/** checkpointInput is the langgraph/checkpoint event of r. */
export function checkpointInput(r) {
    return { type: CHECKPOINT_TYPE, data: r, ignorable: true };
}
/** writesInput is the langgraph/writes event of r. */
export function writesInput(r) {
    return { type: WRITES_TYPE, data: r, ignorable: true };
}
/** Thread is what a thread's session folds to. */
export class Thread {
    /** The log length folded. */
    length = 0;
    /** The last envelope folded, to tell that the log is still the one folded. */
    last;
    /** The log may hold events after length that were not folded (an append was a replay). */
    stale = false;
    /** Namespace → checkpoint id → checkpoint; a later put of an id wins. */
    checkpoints = new Map();
    /** Namespace → checkpoint id → "taskId,idx" → write. */
    writes = new Map();
    loop = { openTurn: null, lastTurn: 0, openStep: null, lastStep: 0, pending: [], recorded: new Set() };
    /** add folds the next event of the log. */
    add(ev) {
        this.length = ev.seq + 1;
        this.last = ev.envelope;
        const l = this.loop;
        const d = ev.data;
        switch (ev.type) {
            case CHECKPOINT_TYPE:
                this.#addCheckpoint(d);
                break;
            case WRITES_TYPE:
                this.#addWrites(d);
                break;
            case "turn/start":
                l.openTurn = d["turn"];
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
                l.openStep = d["step"];
                l.lastStep = l.openStep;
                l.pending = [];
                break;
            case "step/end":
                l.openStep = null;
                l.pending = [];
                break;
            case "user/message":
                l.recorded.add(d["id"]);
                break;
            case "system/message":
            case "developer/message":
                l.recorded.add(d["message"].id);
                break;
            case "assistant/message": {
                const m = d["message"];
                l.recorded.add(m.id);
                for (const b of m.content)
                    if (b.type === "tool-call")
                        l.pending.push(b.id);
                break;
            }
            case "tool/result": {
                const m = d["message"];
                l.recorded.add(m.id);
                if (ev.surfaceOp === "append")
                    l.pending = l.pending.filter((c) => c !== m.toolCallId);
                break;
            }
        }
    }
    #addCheckpoint(r) {
        let byId = this.checkpoints.get(r.ns);
        if (!byId)
            this.checkpoints.set(r.ns, (byId = new Map()));
        const blobs = new Map();
        for (const b of r.blobs)
            blobs.set(blobKey(b.channel, b.version), b.value ?? null);
        byId.set(r.id, { id: r.id, parentId: r.parentId, checkpoint: r.checkpoint, metadata: r.metadata, blobs });
    }
    // addWrites keeps the first write of a (task, idx) with idx ≥ 0 and the
    // last of a special one (negative idx), as MemorySaver does.
    #addWrites(r) {
        let byCheckpoint = this.writes.get(r.ns);
        if (!byCheckpoint)
            this.writes.set(r.ns, (byCheckpoint = new Map()));
        let byKey = byCheckpoint.get(r.checkpointId);
        if (!byKey)
            byCheckpoint.set(r.checkpointId, (byKey = new Map()));
        for (const w of r.writes) {
            const key = `${r.taskId},${w.idx}`;
            if (w.idx >= 0 && byKey.has(key))
                continue;
            byKey.set(key, { taskId: r.taskId, idx: w.idx, channel: w.channel, taskPath: r.taskPath, value: w.value });
        }
    }
    /** blob returns the value of channel at version for checkpoint id of
     * namespace ns: stored by the checkpoint or its nearest ancestor that
     * stored that version (channel versions count per branch, so two
     * branches of a thread may each store one); undefined when none did,
     * null when the channel was empty. */
    blob(ns, id, channel, version) {
        const byId = this.checkpoints.get(ns);
        const key = blobKey(channel, version);
        for (let cp = byId?.get(id), n = 0; cp && n <= byId.size; cp = cp.parentId === undefined ? undefined : byId.get(cp.parentId), n++) {
            const b = cp.blobs.get(key);
            if (b !== undefined)
                return b;
        }
        return undefined;
    }
}
function blobKey(channel, version) {
    return JSON.stringify([channel, version]);
}
