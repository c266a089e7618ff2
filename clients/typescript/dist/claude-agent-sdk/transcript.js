// Claude Code transcript lines as logbook events: each line kept verbatim
// as a log-only record, and its messages, tool calls and tool results also
// as logbook's typed events (docs/format.md, "The core vocabulary").
import * as ev from "../events.js";
import { rawJSON } from "../json.js";
/** The event type of a stored transcript line: an ignorable type logbook
 * does not know (class U in docs/format.md), whose data is the line. */
export const ENTRY_TYPE = "claude-code/entry";
/** The provider of every assistant message a transcript holds. */
const PROVIDER = "anthropic";
/** newLoop is the state before the first line. */
export function newLoop() {
    return { turn: 0, step: 0, reply: undefined, stored: new Set() };
}
/**
 * plan returns the appends that store entry: one or more groups, the first
 * starting with the line's record; each holds at most one surface event
 * (docs/format.md, "The order of checks"), so a user line answering several
 * tool calls takes a group per result. It advances loop's turn, step and
 * reply past the line; the caller adds the uuid to loop.stored once the
 * line is stored.
 */
export function plan(loop, entry) {
    const record = { type: ENTRY_TYPE, data: entryData(entry), ignorable: true };
    const uuid = typeof entry.uuid === "string" && entry.uuid !== "" ? entry.uuid : undefined;
    // A message id is at most 256 bytes; a longer uuid keeps only its record.
    const typed = uuid && Buffer.byteLength(uuid, "utf8") <= 200 ? typedEvents(loop, entry, uuid) : [];
    const groups = [[record]];
    for (const g of typed) {
        const last = groups[groups.length - 1];
        if (g.some((i) => i.surfaceOp !== undefined) && last.some((i) => i.surfaceOp !== undefined))
            groups.push(g);
        else
            last.push(...g);
    }
    return groups;
}
// typedEvents returns the typed events of one line, a list per message.
function typedEvents(loop, entry, uuid) {
    const msg = entry["message"];
    if (!isObject(msg))
        return [];
    if (entry.type === "assistant")
        return [assistantEvents(loop, msg, uuid)];
    if (entry.type !== "user")
        return [];
    const content = typeof msg["content"] === "string" ? [{ type: "text", text: msg["content"] }] : msg["content"];
    if (!Array.isArray(content))
        return [];
    const out = [];
    const rest = [];
    let results = 0;
    for (const b of content) {
        if (isObject(b) && b["type"] === "tool_result" && validCallId(b["tool_use_id"])) {
            const id = results === 0 ? uuid : `${uuid}#${results}`;
            results++;
            out.push([toolResult(loop, id, b)]);
        }
        else {
            rest.push(userBlock(b));
        }
    }
    if (rest.length > 0) {
        const prompt = results === 0 && entry["isMeta"] !== true && entry["isCompactSummary"] !== true;
        if (prompt) {
            loop.turn++;
            loop.step = 0;
            loop.reply = undefined;
        }
        const id = results === 0 ? uuid : `${uuid}#${results}`;
        out.push([ev.user(id, prompt ? "prompt" : "context", ...rest)]);
    }
    return out;
}
function assistantEvents(loop, msg, uuid) {
    const reply = typeof msg["id"] === "string" ? msg["id"] : undefined;
    if (reply === undefined || reply !== loop.reply)
        loop.step++;
    loop.reply = reply;
    const content = [];
    const calls = [];
    const seen = new Set();
    for (const b of Array.isArray(msg["content"]) ? msg["content"] : []) {
        if (isObject(b) && b["type"] === "text" && typeof b["text"] === "string") {
            content.push(ev.text(b["text"]));
        }
        else if (isObject(b) && b["type"] === "thinking" && typeof b["thinking"] === "string") {
            content.push(ev.reasoning(b["thinking"], typeof b["signature"] === "string" ? b["signature"] : ""));
        }
        else if (isObject(b) && b["type"] === "tool_use" && validCallId(b["id"]) && !seen.has(b["id"]) && typeof b["name"] === "string" && b["name"] !== "") {
            seen.add(b["id"]);
            const args = JSON.stringify(b["input"] ?? {});
            content.push(ev.toolCallBlock(b["id"], b["name"], args));
            calls.push(ev.toolCall(loop.turn, loop.step, b["id"], b["name"], args));
        }
        else {
            content.push(foreign(b));
        }
    }
    const model = typeof msg["model"] === "string" && msg["model"] !== "" ? msg["model"] : "unknown";
    const r = { id: uuid, model: { provider: PROVIDER, name: model }, content };
    const usage = usageOf(msg["usage"]);
    if (usage)
        r.usage = usage;
    return [ev.assistant(loop.turn, loop.step, r), ...calls];
}
function toolResult(loop, id, b) {
    const c = b["content"];
    const content = typeof c === "string" ? [ev.text(c)] : Array.isArray(c) ? c.map(userBlock) : c === undefined ? [] : [foreign(c)];
    return ev.tool(loop.turn, loop.step, { id, callID: b["tool_use_id"], content, isError: b["is_error"] === true });
}
// userBlock maps a block of a user message or a tool result: text and
// base64 images as logbook's blocks, anything else kept as a plugin block.
function userBlock(b) {
    if (isObject(b) && b["type"] === "text" && typeof b["text"] === "string")
        return ev.text(b["text"]);
    if (isObject(b) && b["type"] === "image" && isObject(b["source"])) {
        const s = b["source"];
        if (s["type"] === "base64" && typeof s["media_type"] === "string" && typeof s["data"] === "string") {
            return { type: "image", mediaType: s["media_type"], data: s["data"] };
        }
    }
    return foreign(b);
}
// foreign keeps a content block logbook has no type for, verbatim, as the
// plugin block "plugin:claude-code".
function foreign(b) {
    return ev.pluginBlock("claude-code", { block: entryData(b) });
}
function usageOf(u) {
    if (!isObject(u))
        return undefined;
    const n = (k) => (Number.isSafeInteger(u[k]) && u[k] >= 0 ? u[k] : undefined);
    const input = n("input_tokens");
    const output = n("output_tokens");
    if (input === undefined || output === undefined)
        return undefined;
    const out = { input, output };
    const read = n("cache_read_input_tokens");
    const write = n("cache_creation_input_tokens");
    if (read)
        out.cacheRead = read;
    if (write)
        out.cacheWrite = write;
    return out;
}
// validCallId: a call id logbook takes (docs/format.md, "tool/call").
function validCallId(id) {
    return typeof id === "string" && id !== "" && Buffer.byteLength(id, "utf8") <= 128;
}
function isObject(v) {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}
/**
 * entryData returns v as the JSON logbook stores. A transcript line is JSON
 * that JSON.parse read, so its numbers are doubles: an integer beyond 2^53,
 * which logbook refuses as an integer literal (JSON_UNSAFE_INTEGER), is
 * written in exponent form, which reads back as the same double; -0 is
 * written as 0, as JSON.stringify writes it.
 */
export function entryData(v) {
    if (typeof v === "number") {
        if (Number.isInteger(v) && !Number.isSafeInteger(v))
            return rawJSON(v.toExponential());
        return Object.is(v, -0) ? 0 : v;
    }
    if (Array.isArray(v))
        return v.map((x) => entryData(x === undefined ? null : x));
    if (isObject(v)) {
        // No prototype: a member named "__proto__" stays a member.
        const out = Object.create(null);
        for (const [k, x] of Object.entries(v)) {
            if (x !== undefined)
                out[k] = entryData(x);
        }
        return out;
    }
    return v;
}
