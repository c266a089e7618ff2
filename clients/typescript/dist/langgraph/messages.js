// LangChain messages of a checkpoint's messages channel as logbook's typed
// events, placed by the agent-loop protocol (docs/format.md): a human
// message is a user/message in a turn; an AI message is a step (its
// tool calls, and their results as tool/call and tool/result); a turn ends
// with an AI message that asks for no tool.
import { createHash } from "node:crypto";
import * as ev from "../events.js";
/** The longest message id logbook takes, in bytes (docs/format.md, "Messages and content blocks"). */
const MAX_MESSAGE_ID_BYTES = 256;
/** isMessageList reports whether a channel value is a list of LangChain
 * messages, the value of a MessagesAnnotation channel. */
export function isMessageList(v) {
    return Array.isArray(v) && v.every((m) => typeof m === "object" && m !== null && typeof m.type === "string" && "content" in m);
}
/** messageId is the logbook id of a LangChain message id: the id itself
 * when it fits (1–256 bytes), else "lc-" and the SHA-256 of it in hex. */
export function messageId(id) {
    if (id !== "" && Buffer.byteLength(id, "utf8") <= MAX_MESSAGE_ID_BYTES)
        return id;
    return "lc-" + createHash("sha256").update(id).digest("hex");
}
/**
 * messageInputs returns the typed events of the messages not yet recorded
 * in the log whose loop state is loop, in order. A message without an id is
 * skipped (MessagesAnnotation gives every message one). An AI message whose
 * tool calls are not all answered yet is held back, with what follows it,
 * until its results come or a later human or AI message gives up on them
 * (the missing results are then error results, ABORTED_BEFORE_DISPATCH),
 * so that every step is written whole. A tool message whose call is not in
 * the step being written cannot be placed in a strict log and is left out
 * (the checkpoint keeps it).
 */
export function messageInputs(messages, loop) {
    const fresh = messages.filter((m) => typeof m.id === "string" && m.id !== "" && !loop.recorded.has(messageId(m.id)));
    const out = [];
    const s = { openTurn: loop.openTurn, lastTurn: loop.lastTurn, openStep: loop.openStep, lastStep: loop.lastStep, pending: [...loop.pending] };
    const used = new Set();
    // closeStep answers what the open step left pending and ends it.
    const closeStep = () => {
        if (s.openStep === null)
            return;
        for (const c of s.pending)
            out.push(aborted(s.openTurn, s.openStep, c));
        out.push(ev.stepEnd(s.openTurn, s.openStep));
        s.openStep = null;
        s.pending = [];
    };
    const openTurn = () => {
        if (s.openTurn !== null)
            return;
        s.openTurn = ++s.lastTurn;
        s.lastStep = 0;
        out.push(ev.turnStart(s.openTurn));
    };
    for (let i = 0; i < fresh.length; i++) {
        const m = fresh[i];
        if (used.has(m))
            continue;
        const id = messageId(m.id);
        switch (m.type) {
            case "human":
                closeStep();
                openTurn();
                out.push({ type: ev.Types.userMessage, data: message(id, "user", blocks(m.content), { kind: "prompt" }), surfaceOp: "append" });
                break;
            case "system":
                closeStep();
                out.push(ev.system(s.openTurn ?? 0, 0, id, textOf(m.content)));
                break;
            case "tool":
                // A result whose call is not in this step: see above.
                break;
            case "ai": {
                const calls = (m.tool_calls ?? []).map((c, k) => ({ id: c.id || `${id}#${k}`, name: c.name, args: JSON.stringify(c.args ?? {}) }));
                const later = fresh.slice(i + 1);
                const results = calls.map((c) => later.find((r) => r.type === "tool" && r.tool_call_id === c.id && !used.has(r)));
                const givenUp = later.some((r) => r.type === "human" || r.type === "ai");
                if (results.some((r) => r === undefined) && !givenUp)
                    return out; // held back: the step is not whole yet
                closeStep();
                openTurn();
                const turn = s.openTurn;
                const step = ++s.lastStep;
                out.push(ev.stepStart(turn, step));
                const content = blocks(m.content, true).concat(calls.map((c) => ev.toolCallBlock(c.id, c.name, c.args)));
                out.push(ev.assistant(turn, step, { id, model: modelOf(m), content, ...usageOf(m) }));
                // Results in the order they were appended to the channel.
                const order = calls.map((c, k) => ({ c, r: results[k] })).sort((a, b) => rank(fresh, a.r) - rank(fresh, b.r));
                for (const { c, r } of order) {
                    if (r === undefined) {
                        out.push(aborted(turn, step, c.id));
                        continue;
                    }
                    used.add(r);
                    out.push(ev.toolCall(turn, step, c.id, c.name, c.args));
                    out.push(ev.tool(turn, step, { id: messageId(r.id), callID: c.id, content: blocks(r.content), isError: r.status === "error" }));
                }
                out.push(ev.stepEnd(turn, step));
                if (calls.length === 0) {
                    out.push(ev.turnEnd(turn, ev.completed()));
                    s.openTurn = null;
                }
                break;
            }
        }
    }
    return out;
}
// rank orders results by their place in the channel; a missing one last.
function rank(list, m) {
    return m === undefined ? list.length : list.indexOf(m);
}
function aborted(turn, step, callId) {
    return ev.toolError(turn, step, `aborted-${callId}`, callId, "the graph went on without this tool call's result", { name: "langgraph", code: "ABORTED_BEFORE_DISPATCH" });
}
function message(id, role, content, source) {
    return { id, role, content, source };
}
function modelOf(m) {
    const md = m.response_metadata ?? {};
    const provider = typeof md["model_provider"] === "string" && md["model_provider"] !== "" ? md["model_provider"] : "langchain";
    const name = [md["model_name"], md["model"]].find((v) => typeof v === "string" && v !== "") ?? "unknown";
    return { provider, name };
}
function usageOf(m) {
    const u = m.usage_metadata;
    if (!u || !Number.isInteger(u.input_tokens) || !Number.isInteger(u.output_tokens))
        return {};
    return { usage: { input: u.input_tokens, output: u.output_tokens } };
}
function textOf(content) {
    if (typeof content === "string")
        return content;
    return blocks(content)
        .map((b) => (b.type === "text" ? b.text : ""))
        .join("");
}
// blocks maps LangChain content to logbook blocks: text as text, an AI
// message's reasoning block as reasoning, anything else as an opaque
// "plugin:langgraph" block holding the original.
function blocks(content, ai = false) {
    if (typeof content === "string")
        return content === "" ? [] : [ev.text(content)];
    if (!Array.isArray(content))
        return [];
    return content.map((b) => {
        if (b["type"] === "text" && typeof b["text"] === "string")
            return ev.text(b["text"]);
        if (ai && (b["type"] === "reasoning" || b["type"] === "thinking") && typeof (b["reasoning"] ?? b["thinking"]) === "string") {
            return ev.reasoning((b["reasoning"] ?? b["thinking"]));
        }
        return ev.pluginBlock("langgraph", { block: b });
    });
}
