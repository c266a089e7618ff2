// The typed mirror of the OpenAI Agents SDK's items: the loop state folded
// from a logbook log, and the turn/step events that put items that are
// messages, function calls and function call results into logbook's
// vocabulary (docs/format.md, "The agent-loop protocol") without breaking
// the loop rules.
import * as ev from "../events.js";
/** LoopState is the agent-loop state of docs/format.md folded from the
 * log's events (the adapter's own and the server's repairs alike): the open
 * turn and step, the highest numbers so far, and the open step's calls. */
export class LoopState {
    /** The open turn, or -1. */
    openTurn = -1;
    /** The highest turn so far (0 before the first). */
    lastTurn = 0;
    /** The open step, or -1. */
    openStep = -1;
    /** The highest step of the open turn. */
    lastStep = 0;
    /** The calls the open step announced, in order. */
    calls = new Map();
    /** fold moves the state past one stored event. */
    fold(e) {
        const d = e.data;
        switch (e.type) {
            case ev.Types.turnStart:
                this.openTurn = d["turn"];
                this.lastTurn = Math.max(this.lastTurn, this.openTurn);
                this.openStep = -1;
                this.lastStep = 0;
                this.calls.clear();
                break;
            case ev.Types.turnEnd:
                this.openTurn = -1;
                this.openStep = -1;
                this.calls.clear();
                break;
            case ev.Types.stepStart:
                this.openStep = d["step"];
                this.lastStep = Math.max(this.lastStep, this.openStep);
                this.calls.clear();
                break;
            case ev.Types.stepEnd:
                this.openStep = -1;
                this.calls.clear();
                break;
            case ev.Types.assistantMessage: {
                const m = d["message"];
                for (const b of m.content) {
                    if (b.type === "tool-call")
                        this.calls.set(b.id, { name: b.name, args: b.arguments, called: false, answered: false });
                }
                break;
            }
            case ev.Types.toolCall: {
                const c = this.calls.get(d["callId"]);
                if (c)
                    c.called = true;
                break;
            }
            case ev.Types.toolResult: {
                if (e.surfaceOp !== "append")
                    break; // a rewrite answers nothing
                const c = this.calls.get(d["message"].toolCallId ?? "");
                if (c)
                    c.answered = true;
                break;
            }
        }
    }
    /** unanswered returns the open step's calls without a result, in order. */
    unanswered() {
        return [...this.calls].filter(([, c]) => !c.answered).map(([id]) => id);
    }
    /** clone returns a copy that folds on its own. */
    clone() {
        const s = new LoopState();
        s.openTurn = this.openTurn;
        s.lastTurn = this.lastTurn;
        s.openStep = this.openStep;
        s.lastStep = this.lastStep;
        for (const [id, c] of this.calls)
            s.calls.set(id, { ...c });
        return s;
    }
}
/** Why a turn the mirror closes early ended: the history moved on (a new
 * user message) before the turn's final output. */
const superseded = ev.pluginReason("openai-agents", { why: "the history went on with a new user message before this turn's final output" });
/** The mirror writes the typed events of a run of items against a copy of
 * the loop state, so that a refused append leaves the adapter's own state
 * as it was. */
export class Mirror {
    /** The events written so far, in order. */
    out = [];
    #st;
    #model;
    #idPrefix;
    #acc = [];
    /** idPrefix names the record the items belong to; message ids are
     * "<idPrefix>-<index of the item>". */
    constructor(st, model, idPrefix) {
        this.#st = st.clone();
        this.#model = model;
        this.#idPrefix = idPrefix;
    }
    /** The loop state after the events written so far. */
    get state() {
        return this.#st;
    }
    /** items mirrors items, numbered from first. */
    items(items, first = 0) {
        items.forEach((it, i) => this.#item(it, first + i));
        this.#flush();
        return this;
    }
    #emit(i) {
        this.out.push(i);
        // The mirror folds its own inputs as the server will store them.
        this.#st.fold({ type: i.type, data: i.data, surfaceOp: i.surfaceOp });
    }
    #id(index) {
        return `${this.#idPrefix}-${index}`;
    }
    #item(item, index) {
        const type = item["type"];
        const role = item["role"];
        if (type === "reasoning" || type === "function_call" || (role === "assistant" && (type === "message" || type === undefined))) {
            this.#acc.push({ item, index });
            return;
        }
        if (role === "user" && (type === "message" || type === undefined)) {
            this.#flush();
            this.#user(item, index);
        }
        else if ((role === "system" || role === "developer") && (type === "message" || type === undefined)) {
            this.#flush();
            this.#instruction(item, index, role);
        }
        else if (type === "function_call_result") {
            this.#flush();
            this.#result(item, index);
        }
        // Any other item (hosted tool calls, computer, shell and patch calls
        // and their results, compaction, unknown types) is kept in the record
        // only: logbook's vocabulary has no event for it.
    }
    #user(item, index) {
        const st = this.#st;
        if (st.openTurn >= 0 && st.lastStep > 0)
            this.#closeTurn(superseded);
        if (st.openTurn < 0)
            this.#emit(ev.turnStart(st.lastTurn + 1));
        this.#emit(ev.user(this.#id(index), "prompt", ...inputBlocks(item["content"])));
    }
    #instruction(item, index, role) {
        const st = this.#st;
        if (st.unanswered().length > 0)
            return; // the loop rules refuse it here: record only
        const turn = st.openTurn >= 0 ? st.openTurn : 0;
        const step = st.openStep >= 0 ? st.openStep : 0;
        const blocks = inputBlocks(item["content"]).filter((b) => b.type === "text");
        if (role === "system") {
            const m = { id: this.#id(index), role: "system", content: blocks, source: { kind: "system-prompt" } };
            this.#emit({ type: ev.Types.systemMessage, data: { turn, step, message: m }, surfaceOp: "append" });
        }
        else {
            const m = { id: this.#id(index), role: "developer", content: blocks, source: { kind: "openai-agents" } };
            this.#emit({ type: ev.Types.developerMessage, data: { turn, step, message: m }, surfaceOp: "append" });
        }
    }
    #result(item, index) {
        const st = this.#st;
        const callId = item["callId"];
        if (typeof callId !== "string")
            return;
        const c = st.calls.get(callId);
        if (st.openStep < 0 || !c || c.answered)
            return; // its call is not open here: record only
        if (!c.called)
            this.#emit(ev.toolCall(st.openTurn, st.openStep, callId, c.name, c.args));
        const failed = item["status"] === "incomplete";
        this.#emit(ev.tool(st.openTurn, st.openStep, { id: this.#id(index), callID: callId, content: outputBlocks(item["output"]), isError: failed }));
        if (st.unanswered().length === 0)
            this.#emit(ev.stepEnd(st.openTurn, st.openStep));
    }
    // flush writes the assistant items gathered so far as one model reply:
    // one assistant/message in a new step, with a tool-call block per
    // function call. A reply without calls is the turn's final output: its
    // step and turn end with it.
    #flush() {
        const acc = this.#acc;
        this.#acc = [];
        if (acc.length === 0)
            return;
        const st = this.#st;
        if (st.unanswered().length > 0)
            return; // calls split over two writes: record only
        if (st.openStep >= 0)
            this.#emit(ev.stepEnd(st.openTurn, st.openStep));
        if (st.openTurn < 0)
            this.#emit(ev.turnStart(st.lastTurn + 1));
        const blocks = [];
        for (const { item } of acc)
            blocks.push(...assistantBlocks(item));
        const turn = st.openTurn;
        const step = st.lastStep + 1;
        this.#emit(ev.stepStart(turn, step));
        this.#emit(ev.assistant(turn, step, { id: this.#id(acc[0].index), model: this.#model, content: blocks }));
        if (st.unanswered().length === 0) {
            this.#emit(ev.stepEnd(turn, step));
            this.#emit(ev.turnEnd(turn, ev.completed()));
        }
    }
    // closeTurn ends the open turn: the open step's calls without a result
    // get an error result (the history went on without one), then step/end
    // and turn/end.
    #closeTurn(reason) {
        const st = this.#st;
        if (st.openStep >= 0) {
            for (const id of st.unanswered()) {
                this.#emit(ev.toolError(st.openTurn, st.openStep, `${this.#idPrefix}-unanswered-${id}`, id, "No function_call_result was recorded for this call before the history went on.", {
                    name: "UnansweredCall",
                    code: "NO_RESULT_ITEM",
                }));
            }
            this.#emit(ev.stepEnd(st.openTurn, st.openStep));
        }
        this.#emit(ev.turnEnd(st.openTurn, reason));
    }
}
// ---- content ----
function inputBlocks(content) {
    if (typeof content === "string")
        return [ev.text(content)];
    if (!Array.isArray(content))
        return [];
    const out = [];
    for (const part of content) {
        if ((part["type"] === "input_text" || part["type"] === "output_text") && typeof part["text"] === "string")
            out.push(ev.text(part["text"]));
        else if (part["type"] === "input_image") {
            const img = dataImage(part["image"]);
            if (img)
                out.push(img);
        }
    }
    return out;
}
function assistantBlocks(item) {
    const out = [];
    if (item["type"] === "reasoning") {
        for (const list of [item["content"], item["rawContent"]]) {
            if (!Array.isArray(list))
                continue;
            for (const p of list)
                if (typeof p["text"] === "string" && p["text"] !== "")
                    out.push(ev.reasoning(p["text"]));
        }
    }
    else if (item["type"] === "function_call") {
        out.push(ev.toolCallBlock(String(item["callId"]), String(item["name"]), String(item["arguments"] ?? "")));
    }
    else if (typeof item["content"] === "string") {
        out.push(ev.text(item["content"]));
    }
    else if (Array.isArray(item["content"])) {
        for (const p of item["content"]) {
            if (p["type"] === "output_text" && typeof p["text"] === "string")
                out.push(ev.text(p["text"]));
            else if (p["type"] === "refusal" && typeof p["refusal"] === "string")
                out.push(ev.text(p["refusal"]));
        }
    }
    return out;
}
function outputBlocks(output) {
    if (typeof output === "string")
        return [ev.text(output)];
    const parts = Array.isArray(output) ? output : [output];
    const out = [];
    for (const p of parts) {
        if (typeof p === "string") {
            out.push(ev.text(p));
            continue;
        }
        const o = (p ?? {});
        if ((o["type"] === "text" || o["type"] === "input_text") && typeof o["text"] === "string")
            out.push(ev.text(o["text"]));
        else {
            const img = o["type"] === "image" || o["type"] === "input_image" ? dataImage(o["image"] ?? o["data"]) : undefined;
            out.push(img ?? ev.text(JSON.stringify(p)));
        }
    }
    return out;
}
// dataImage turns a base64 data URL into an image block; anything else
// (a remote URL, a file id) has no block and stays in the record only.
function dataImage(src) {
    if (typeof src !== "string")
        return undefined;
    const m = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/.exec(src);
    if (!m || m[2].length % 4 !== 0)
        return undefined;
    return { type: "image", mediaType: m[1], data: m[2] };
}
