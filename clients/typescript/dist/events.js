// The event vocabulary a harness writes (docs/format.md in the logbook
// repository): the payload type of every core event and a builder for each,
// mirroring the Go package events. Builders write members in the order
// logbook stores them, so the data that comes back from the log is the data
// that went in, byte for byte. A builder never throws: what it cannot tell
// is wrong without the session (an empty id, a tool call nobody asked for)
// is sent as given and the append rejects it with the rule it breaks.
import { memberText } from "./json.js";
/** The event types of the core vocabulary a harness writes. */
export const Types = {
    turnStart: "turn/start",
    turnEnd: "turn/end",
    stepStart: "step/start",
    stepEnd: "step/end",
    systemMessage: "system/message",
    developerMessage: "developer/message",
    userMessage: "user/message",
    assistantMessage: "assistant/message",
    assistantAttempt: "assistant/attempt",
    toolCall: "tool/call",
    toolResult: "tool/result",
    todoWrite: "todo/write",
    requestHeader: "request/header",
    requestContext: "request/context",
};
/** text is a text block. */
export function text(text) {
    return { type: "text", text };
}
/** reasoning is a reasoning block; signature "" (the default) writes none. */
export function reasoning(text, signature = "") {
    return signature === "" ? { type: "reasoning", text } : { type: "reasoning", text, signature };
}
/** toolCallBlock is an assistant's call of tool name with the raw argument text. */
export function toolCallBlock(id, name, args) {
    return { type: "tool-call", id, name, arguments: args };
}
/** image is an image block of mediaType; data is the image's bytes, written in base64. */
export function image(mediaType, data) {
    return { type: "image", mediaType, data: Buffer.from(data).toString("base64") };
}
/** toolAddition says that tool name became available (Developer with a headerSeq). */
export function toolAddition(name) {
    return { type: "tool-addition", toolName: name };
}
/** toolRemoval says that tool name went away. */
export function toolRemoval(name) {
    return { type: "tool-removal", toolName: name };
}
/** pluginBlock is the opaque block "plugin:<name>" with members after type. */
export function pluginBlock(name, members = {}) {
    return { type: `plugin:${name}`, ...members };
}
/** The reason of a turn the agent loop finished normally. */
export const completed = () => ({ kind: "completed" });
/** The reason of a turn the user stopped. */
export const abortedByUser = () => ({ kind: "aborted", cause: { kind: "user" } });
/** The reason of a turn its parent stopped. */
export const abortedByParent = () => ({ kind: "aborted", cause: { kind: "parent" } });
/** The reason of a turn stopped because its agent was disposed. */
export const abortedDisposed = () => ({ kind: "aborted", cause: { kind: "disposed" } });
/** The reason of a turn a hook stopped, saying why. */
export const abortedByHook = (why) => ({ kind: "aborted", cause: { kind: "hook", reason: why } });
/** The reason of a turn a hook or policy blocked. */
export const blocked = () => ({ kind: "blocked" });
/** The reason of a failed turn; a failure not from the model has code "UNKNOWN". */
export const failed = (code, message) => ({ kind: "error", error: { message, code } });
/** The reason of a turn whose step hit the output token cap. */
export const maxTokens = () => ({ kind: "max-tokens" });
/** The reason crash repair writes; a harness does not write it. */
export const interrupted = () => ({ kind: "interrupted" });
/** The reason a fork writes when it closes a turn it cut. */
export const forked = () => ({ kind: "forked" });
/** The reason "plugin:<name>" of a plugin, with members after kind. */
export const pluginReason = (name, members = {}) => ({ kind: `plugin:${name}`, ...members });
/** turnStart is turn/start: turn begins. */
export function turnStart(turn) {
    return { type: Types.turnStart, data: { turn } };
}
/** turnEnd is turn/end: turn is over, for reason. */
export function turnEnd(turn, reason) {
    return { type: Types.turnEnd, data: { turn, reason } };
}
/** stepStart is step/start: step of turn begins. */
export function stepStart(turn, step) {
    return { type: Types.stepStart, data: { turn, step } };
}
/** stepEnd is step/end: step of turn is over. */
export function stepEnd(turn, step) {
    return { type: Types.stepEnd, data: { turn, step } };
}
function surface(type, data) {
    return { type, data, surfaceOp: "append" };
}
function message(id, role, content, source) {
    return { id, role, content, source };
}
/** system is system/message: the system prompt as message id with one text block. */
export function system(turn, step, id, prompt) {
    return surface(Types.systemMessage, { turn, step, message: message(id, "system", [text(prompt)], { kind: "system-prompt" }) });
}
/** developer is developer/message: tools became available (toolAddition
 * blocks, which need headerSeq, the request/header declaring them) or went
 * away (toolRemoval); headerSeq is written only when a block adds a tool. */
export function developer(turn, step, id, headerSeq, ...content) {
    const data = { turn, step, message: message(id, "developer", content, { kind: "tool-change" }) };
    if (content.some((b) => b.type === "tool-addition"))
        data.headerSeq = headerSeq;
    return surface(Types.developerMessage, data);
}
/** user is user/message: message id with content; kind is the source kind,
 * "prompt" for what the user asked or e.g. "context" for injected context. */
export function user(id, kind, ...content) {
    return surface(Types.userMessage, message(id, "user", content, { kind }));
}
/** userText is user/message: the user's prompt text as message id. */
export function userText(id, prompt) {
    return user(id, "prompt", text(prompt));
}
/** assistant is assistant/message: the model's reply r in step of turn. */
export function assistant(turn, step, r) {
    const source = { kind: "model", provider: r.model.provider, model: r.model.name };
    const data = { turn, step, message: message(r.id, "assistant", r.content, source), stream: r.stream ?? [] };
    if (r.usage)
        data.usage = usage(r.usage);
    if (r.interrupted)
        data.interrupted = true;
    return surface(Types.assistantMessage, data);
}
function usage(u) {
    const out = { input: u.input, output: u.output };
    if (u.cacheRead)
        out.cacheRead = u.cacheRead;
    if (u.cacheWrite)
        out.cacheWrite = u.cacheWrite;
    return out;
}
/** assistantText is assistant/message: reply id of model m with one text block. */
export function assistantText(turn, step, id, m, reply) {
    return assistant(turn, step, { id, model: m, content: [text(reply)] });
}
/** assistantAttempt is assistant/attempt: a model call that settled
 * without a message on the surface, with its stream records. */
export function assistantAttempt(turn, step, ...stream) {
    return { type: Types.assistantAttempt, data: { turn, step, stream } };
}
/** toolCall is tool/call: execution of call callID has started. */
export function toolCall(turn, step, callID, name, args) {
    return { type: Types.toolCall, data: { turn, step, callId: callID, name, arguments: args } };
}
/** tool is tool/result: the result m of a tool call in step of turn. */
export function tool(turn, step, m) {
    const source = { kind: "tool", callId: m.callID };
    const msg = m.isError || m.failure
        ? { id: m.id, role: "tool", toolCallId: m.callID, isError: true, content: m.content, source }
        : { id: m.id, role: "tool", toolCallId: m.callID, content: m.content, source };
    const data = { turn, step, message: msg };
    if (m.failure) {
        data.error = { name: m.failure.name, code: m.failure.code };
        if (m.failure.reason)
            data.error.reason = m.failure.reason;
    }
    if (m.meta !== undefined)
        data.meta = m.meta;
    return surface(Types.toolResult, data);
}
/** toolResult is tool/result: the successful result of call callID as message id. */
export function toolResult(turn, step, id, callID, result) {
    return tool(turn, step, { id, callID, content: [text(result)] });
}
/** toolError is tool/result: call callID failed; text tells the model,
 * failure (optional) is the error. */
export function toolError(turn, step, id, callID, message, failure) {
    const m = { id, callID, content: [text(message)], isError: true };
    if (failure)
        m.failure = failure;
    return tool(turn, step, m);
}
/** replacing returns input as the replacement of the surface nodes start
 * … end instead of an append, shadowing the events listed. */
export function replacing(input, start, end, ...shadowed) {
    return { ...input, surfaceOp: { op: "replace", startSeq: start, endSeq: end }, sourceEventSeqs: [...shadowed] };
}
/** requestHeader is request/header: settings h are in force from here on;
 * startsSeries marks a request with reason initial, resume or change that
 * also starts a new message series. */
export function requestHeader(h, reason, startsSeries = false) {
    const { provider, model, reasoningEffort, maxTokens, temperature, stop, ...extra } = h.config;
    const config = { provider, model };
    if (reasoningEffort)
        config.reasoningEffort = reasoningEffort;
    if (maxTokens)
        config.maxTokens = maxTokens;
    if (temperature !== undefined)
        config.temperature = temperature;
    if (stop !== undefined)
        config.stop = stop;
    Object.assign(config, extra);
    const header = { config };
    const ad = h.adapterDefaults;
    if (ad && (ad.reasoningEffort || ad.maxTokens)) {
        header.adapterDefaults = {};
        if (ad.reasoningEffort)
            header.adapterDefaults.reasoningEffort = true;
        if (ad.maxTokens)
            header.adapterDefaults.maxTokens = true;
    }
    if (h.tools && h.tools.length > 0)
        header.tools = h.tools.map(toolSchema);
    const data = { header, reason };
    if (startsSeries)
        data.startsSeries = true;
    return { type: Types.requestHeader, data };
}
function toolSchema(t) {
    const out = { name: t.name };
    if (t.description)
        out.description = t.description;
    if (t.parameters !== undefined)
        out.parameters = t.parameters;
    if (t.deferLoading)
        out.deferLoading = true;
    return out;
}
/** requestContext is request/context: the model and context window facts,
 * written next to a request/header when they change. */
export function requestContext(m, contextWindow = 0, systemPromptUpdate = "") {
    const data = { provider: m.provider, model: m.name };
    if (contextWindow)
        data.contextWindow = contextWindow;
    if (systemPromptUpdate)
        data.systemPromptUpdate = systemPromptUpdate;
    return { type: Types.requestContext, data };
}
/** todoWrite is todo/write: the agent's whole to-do list. */
export function todoWrite(...todos) {
    return { type: Types.todoWrite, data: { todos: todos.map((t) => ({ content: t.content, status: t.status })) } };
}
// ---- stored events ----
/** Event is one stored event: its canonical envelope, exactly as the log
 * holds it, and the members read from it. dataText is the data's own
 * text (lossless); data parses it on first use with JSON.parse, which
 * rounds numbers beyond a double's precision. */
export class Event {
    seq;
    /** Milliseconds since the Unix epoch. */
    time;
    type;
    surfaceOp;
    sourceEventSeqs;
    ignorable;
    /** The envelope exactly as the server sent it. */
    envelope;
    #data;
    #parsed = false;
    /** Event parses a canonical envelope. */
    constructor(envelope) {
        const e = JSON.parse(envelope);
        this.envelope = envelope;
        this.seq = e.seq;
        this.time = e.time;
        this.type = e.type;
        if (e.surfaceOp !== undefined)
            this.surfaceOp = e.surfaceOp;
        if (e.sourceEventSeqs !== undefined)
            this.sourceEventSeqs = e.sourceEventSeqs;
        this.ignorable = e.ignorable === true;
    }
    /** The text of data in the envelope, byte for byte. */
    get dataText() {
        const t = memberText(this.envelope, "data");
        if (t === undefined)
            throw new SyntaxError(`logbook: envelope of seq ${this.seq} has no data`);
        return t;
    }
    /** data parsed with JSON.parse (use dataText where numbers must survive). */
    get data() {
        if (!this.#parsed) {
            this.#data = JSON.parse(this.dataText);
            this.#parsed = true;
        }
        return this.#data;
    }
}
