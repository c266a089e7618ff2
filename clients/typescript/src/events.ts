// The event vocabulary a harness writes (docs/format.md in the logbook
// repository): the payload type of every core event and a builder for each,
// mirroring the Go package events. Builders write members in the order
// logbook stores them, so the data that comes back from the log is the data
// that went in, byte for byte. A builder never throws: what it cannot tell
// is wrong without the session (an empty id, a tool call nobody asked for)
// is sent as given and the append rejects it with the rule it breaks.

import { memberText, type JSONValue, type RawJSON } from "./json.js";

/** A seq: an event's position in its log, from 0, below 2^53. */
export type Seq = number;

/** How a surface event changes the model's view: "append", or the
 * replacement of the surface nodes startSeq … endSeq (inclusive). */
export type SurfaceOp = "append" | { op: "replace"; startSeq: Seq; endSeq: Seq };

/** Input is one event to append: its type, its data (any JSON; RawJSON for
 * text sent verbatim) and the optional envelope members. The server
 * assigns seq and time. */
export interface Input<D = JSONValue> {
  type: string;
  data: D;
  surfaceOp?: SurfaceOp;
  /** The events a replacement shadows; absent for none. */
  sourceEventSeqs?: Seq[];
  /** Only for types this build does not know (plugin records). */
  ignorable?: true;
}

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
} as const;

// ---- content blocks ----

/** A text block. */
export interface TextBlock { type: "text"; text: string }
/** An assistant's reasoning block, with the provider's signature if any. */
export interface ReasoningBlock { type: "reasoning"; text: string; signature?: string }
/** An assistant's request to call a tool; arguments is the raw argument text. */
export interface ToolCallBlock { type: "tool-call"; id: string; name: string; arguments: string }
/** An image; data is standard base64. */
export interface ImageBlock { type: "image"; mediaType: string; data: string }
/** A developer message's block: tool toolName became available. */
export interface ToolAdditionBlock { type: "tool-addition"; toolName: string }
/** A developer message's block: tool toolName went away. */
export interface ToolRemovalBlock { type: "tool-removal"; toolName: string }
/** An opaque block of a plugin, type "plugin:<name>". */
export interface PluginBlock { type: `plugin:${string}`; [member: string]: JSONValue | undefined }
/** One content block of a message. */
export type Block = TextBlock | ReasoningBlock | ToolCallBlock | ImageBlock | ToolAdditionBlock | ToolRemovalBlock | PluginBlock;

/** text is a text block. */
export function text(text: string): TextBlock {
  return { type: "text", text };
}
/** reasoning is a reasoning block; signature "" (the default) writes none. */
export function reasoning(text: string, signature = ""): ReasoningBlock {
  return signature === "" ? { type: "reasoning", text } : { type: "reasoning", text, signature };
}
/** toolCallBlock is an assistant's call of tool name with the raw argument text. */
export function toolCallBlock(id: string, name: string, args: string): ToolCallBlock {
  return { type: "tool-call", id, name, arguments: args };
}
/** image is an image block of mediaType; data is the image's bytes, written in base64. */
export function image(mediaType: string, data: Uint8Array): ImageBlock {
  return { type: "image", mediaType, data: Buffer.from(data).toString("base64") };
}
/** toolAddition says that tool name became available (Developer with a headerSeq). */
export function toolAddition(name: string): ToolAdditionBlock {
  return { type: "tool-addition", toolName: name };
}
/** toolRemoval says that tool name went away. */
export function toolRemoval(name: string): ToolRemovalBlock {
  return { type: "tool-removal", toolName: name };
}
/** pluginBlock is the opaque block "plugin:<name>" with members after type. */
export function pluginBlock(name: string, members: { [member: string]: JSONValue } = {}): PluginBlock {
  return { type: `plugin:${name}`, ...members };
}

// ---- messages ----

/** Where a message came from. */
export type Source =
  | { kind: "system-prompt" }
  | { kind: "tool-change" }
  | { kind: "model"; provider: string; model: string }
  | { kind: "tool"; callId: string }
  | { kind: string; [member: string]: JSONValue | undefined };

/** A message as logbook stores and derives it. */
export interface Message {
  id: string;
  role: "system" | "developer" | "user" | "assistant" | "tool";
  toolCallId?: string;
  isError?: true;
  content: Block[];
  source: Source;
}

/** The model a reply came from. */
export interface Model { provider: string; name: string }

/** Token usage of a model call; cacheRead and cacheWrite only when not 0. */
export interface Usage { input: number; output: number; cacheRead?: number; cacheWrite?: number }

// ---- turn and step ----

/** Why a turn ended: make one with completed(), abortedByUser(), … */
export type Reason =
  | { kind: "completed" | "blocked" | "max-tokens" | "interrupted" | "forked" }
  | { kind: "aborted"; cause: { kind: "user" | "parent" | "disposed" } | { kind: "hook"; reason: string } }
  | { kind: "error"; error: { message: string; code: string } }
  | { kind: `plugin:${string}`; [member: string]: JSONValue | undefined };

/** The reason of a turn the agent loop finished normally. */
export const completed = (): Reason => ({ kind: "completed" });
/** The reason of a turn the user stopped. */
export const abortedByUser = (): Reason => ({ kind: "aborted", cause: { kind: "user" } });
/** The reason of a turn its parent stopped. */
export const abortedByParent = (): Reason => ({ kind: "aborted", cause: { kind: "parent" } });
/** The reason of a turn stopped because its agent was disposed. */
export const abortedDisposed = (): Reason => ({ kind: "aborted", cause: { kind: "disposed" } });
/** The reason of a turn a hook stopped, saying why. */
export const abortedByHook = (why: string): Reason => ({ kind: "aborted", cause: { kind: "hook", reason: why } });
/** The reason of a turn a hook or policy blocked. */
export const blocked = (): Reason => ({ kind: "blocked" });
/** The reason of a failed turn; a failure not from the model has code "UNKNOWN". */
export const failed = (code: string, message: string): Reason => ({ kind: "error", error: { message, code } });
/** The reason of a turn whose step hit the output token cap. */
export const maxTokens = (): Reason => ({ kind: "max-tokens" });
/** The reason crash repair writes; a harness does not write it. */
export const interrupted = (): Reason => ({ kind: "interrupted" });
/** The reason a fork writes when it closes a turn it cut. */
export const forked = (): Reason => ({ kind: "forked" });
/** The reason "plugin:<name>" of a plugin, with members after kind. */
export const pluginReason = (name: string, members: { [member: string]: JSONValue } = {}): Reason => ({ kind: `plugin:${name}`, ...members });

/** Data of turn/start. */
export interface TurnStartData { turn: number }
/** Data of turn/end. */
export interface TurnEndData { turn: number; reason: Reason }
/** Data of step/start and step/end. */
export interface StepData { turn: number; step: number }

/** turnStart is turn/start: turn begins. */
export function turnStart(turn: number): Input<TurnStartData> {
  return { type: Types.turnStart, data: { turn } };
}
/** turnEnd is turn/end: turn is over, for reason. */
export function turnEnd(turn: number, reason: Reason): Input<TurnEndData> {
  return { type: Types.turnEnd, data: { turn, reason } };
}
/** stepStart is step/start: step of turn begins. */
export function stepStart(turn: number, step: number): Input<StepData> {
  return { type: Types.stepStart, data: { turn, step } };
}
/** stepEnd is step/end: step of turn is over. */
export function stepEnd(turn: number, step: number): Input<StepData> {
  return { type: Types.stepEnd, data: { turn, step } };
}

// ---- surface messages ----

/** Data of system/message and developer/message. */
export interface MessageData extends StepData { message: Message; headerSeq?: Seq }
/** Data of assistant/message. */
export interface AssistantData extends StepData {
  message: Message;
  stream: JSONValue[];
  usage?: Usage;
  interrupted?: true;
}
/** Data of assistant/attempt. */
export interface AttemptData extends StepData { stream: JSONValue[] }

function surface<D>(type: string, data: D): Input<D> {
  return { type, data, surfaceOp: "append" };
}

function message(id: string, role: Message["role"], content: Block[], source: Source): Message {
  return { id, role, content, source };
}

/** system is system/message: the system prompt as message id with one text block. */
export function system(turn: number, step: number, id: string, prompt: string): Input<MessageData> {
  return surface(Types.systemMessage, { turn, step, message: message(id, "system", [text(prompt)], { kind: "system-prompt" }) });
}

/** developer is developer/message: tools became available (toolAddition
 * blocks, which need headerSeq, the request/header declaring them) or went
 * away (toolRemoval); headerSeq is written only when a block adds a tool. */
export function developer(turn: number, step: number, id: string, headerSeq: Seq, ...content: Block[]): Input<MessageData> {
  const data: MessageData = { turn, step, message: message(id, "developer", content, { kind: "tool-change" }) };
  if (content.some((b) => b.type === "tool-addition")) data.headerSeq = headerSeq;
  return surface(Types.developerMessage, data);
}

/** user is user/message: message id with content; kind is the source kind,
 * "prompt" for what the user asked or e.g. "context" for injected context. */
export function user(id: string, kind: string, ...content: Block[]): Input<Message> {
  return surface(Types.userMessage, message(id, "user", content, { kind }));
}

/** userText is user/message: the user's prompt text as message id. */
export function userText(id: string, prompt: string): Input<Message> {
  return user(id, "prompt", text(prompt));
}

/** What a model call produced, for assistant(). */
export interface Reply {
  id: string;
  model: Model;
  content: Block[];
  /** The provider's stream records, verbatim; absent = the empty stream. */
  stream?: JSONValue[];
  usage?: Usage;
  /** The stream was cut short. */
  interrupted?: boolean;
}

/** assistant is assistant/message: the model's reply r in step of turn. */
export function assistant(turn: number, step: number, r: Reply): Input<AssistantData> {
  const source: Source = { kind: "model", provider: r.model.provider, model: r.model.name };
  const data: AssistantData = { turn, step, message: message(r.id, "assistant", r.content, source), stream: r.stream ?? [] };
  if (r.usage) data.usage = usage(r.usage);
  if (r.interrupted) data.interrupted = true;
  return surface(Types.assistantMessage, data);
}

function usage(u: Usage): Usage {
  const out: Usage = { input: u.input, output: u.output };
  if (u.cacheRead) out.cacheRead = u.cacheRead;
  if (u.cacheWrite) out.cacheWrite = u.cacheWrite;
  return out;
}

/** assistantText is assistant/message: reply id of model m with one text block. */
export function assistantText(turn: number, step: number, id: string, m: Model, reply: string): Input<AssistantData> {
  return assistant(turn, step, { id, model: m, content: [text(reply)] });
}

/** assistantAttempt is assistant/attempt: a model call that settled
 * without a message on the surface, with its stream records. */
export function assistantAttempt(turn: number, step: number, ...stream: JSONValue[]): Input<AttemptData> {
  return { type: Types.assistantAttempt, data: { turn, step, stream } };
}

// ---- tools ----

/** Data of tool/call. */
export interface ToolCallData extends StepData { callId: string; name: string; arguments: string }

/** toolCall is tool/call: execution of call callID has started. */
export function toolCall(turn: number, step: number, callID: string, name: string, args: string): Input<ToolCallData> {
  return { type: Types.toolCall, data: { turn, step, callId: callID, name, arguments: args } };
}

/** The error of a failed tool call. */
export interface ToolFailure { name: string; code: string; reason?: string }

/** A tool call's result, for tool(). */
export interface ToolMessage {
  id: string;
  callID: string;
  content: Block[];
  /** Marks a failure; implied by failure. */
  isError?: boolean;
  failure?: ToolFailure;
  meta?: JSONValue;
}

/** Data of tool/result. */
export interface ToolResultData extends StepData { message: Message; error?: ToolFailure; meta?: JSONValue }

/** tool is tool/result: the result m of a tool call in step of turn. */
export function tool(turn: number, step: number, m: ToolMessage): Input<ToolResultData> {
  const source: Source = { kind: "tool", callId: m.callID };
  const msg: Message =
    m.isError || m.failure
      ? { id: m.id, role: "tool", toolCallId: m.callID, isError: true, content: m.content, source }
      : { id: m.id, role: "tool", toolCallId: m.callID, content: m.content, source };
  const data: ToolResultData = { turn, step, message: msg };
  if (m.failure) {
    data.error = { name: m.failure.name, code: m.failure.code };
    if (m.failure.reason) data.error.reason = m.failure.reason;
  }
  if (m.meta !== undefined) data.meta = m.meta;
  return surface(Types.toolResult, data);
}

/** toolResult is tool/result: the successful result of call callID as message id. */
export function toolResult(turn: number, step: number, id: string, callID: string, result: string): Input<ToolResultData> {
  return tool(turn, step, { id, callID, content: [text(result)] });
}

/** toolError is tool/result: call callID failed; text tells the model,
 * failure (optional) is the error. */
export function toolError(turn: number, step: number, id: string, callID: string, message: string, failure?: ToolFailure): Input<ToolResultData> {
  const m: ToolMessage = { id, callID, content: [text(message)], isError: true };
  if (failure) m.failure = failure;
  return tool(turn, step, m);
}

/** replacing returns input as the replacement of the surface nodes start
 * … end instead of an append, shadowing the events listed. */
export function replacing<D>(input: Input<D>, start: Seq, end: Seq, ...shadowed: Seq[]): Input<D> {
  return { ...input, surfaceOp: { op: "replace", startSeq: start, endSeq: end }, sourceEventSeqs: [...shadowed] };
}

// ---- request ----

/** Why a request/header was written. */
export type HeaderReason = "initial" | "resume" | "change" | "series";

/** The model configuration of a header; optional members only when set. */
export interface Config {
  provider: string;
  model: string;
  reasoningEffort?: string;
  maxTokens?: number;
  temperature?: number;
  stop?: string[];
  [extra: string]: JSONValue | undefined;
}

/** One tool a header declares. */
export interface ToolSchema { name: string; description?: string; parameters?: JSONValue | RawJSON; deferLoading?: true }

/** The request settings of a request/header. */
export interface Header {
  config: Config;
  adapterDefaults?: { reasoningEffort?: true; maxTokens?: true };
  tools?: ToolSchema[];
}

/** Data of request/header. */
export interface RequestHeaderData { header: Header; reason: HeaderReason; startsSeries?: true }

/** requestHeader is request/header: settings h are in force from here on;
 * startsSeries marks a request with reason initial, resume or change that
 * also starts a new message series. */
export function requestHeader(h: Header, reason: HeaderReason, startsSeries = false): Input<RequestHeaderData> {
  const { provider, model, reasoningEffort, maxTokens, temperature, stop, ...extra } = h.config;
  const config: Config = { provider, model };
  if (reasoningEffort) config.reasoningEffort = reasoningEffort;
  if (maxTokens) config.maxTokens = maxTokens;
  if (temperature !== undefined) config.temperature = temperature;
  if (stop !== undefined) config.stop = stop;
  Object.assign(config, extra);
  const header: Header = { config };
  const ad = h.adapterDefaults;
  if (ad && (ad.reasoningEffort || ad.maxTokens)) {
    header.adapterDefaults = {};
    if (ad.reasoningEffort) header.adapterDefaults.reasoningEffort = true;
    if (ad.maxTokens) header.adapterDefaults.maxTokens = true;
  }
  if (h.tools && h.tools.length > 0) header.tools = h.tools.map(toolSchema);
  const data: RequestHeaderData = { header, reason };
  if (startsSeries) data.startsSeries = true;
  return { type: Types.requestHeader, data };
}

function toolSchema(t: ToolSchema): ToolSchema {
  const out: ToolSchema = { name: t.name };
  if (t.description) out.description = t.description;
  if (t.parameters !== undefined) out.parameters = t.parameters;
  if (t.deferLoading) out.deferLoading = true;
  return out;
}

/** Data of request/context. */
export interface RequestContextData { provider: string; model: string; contextWindow?: number; systemPromptUpdate?: string }

/** requestContext is request/context: the model and context window facts,
 * written next to a request/header when they change. */
export function requestContext(m: Model, contextWindow = 0, systemPromptUpdate = ""): Input<RequestContextData> {
  const data: RequestContextData = { provider: m.provider, model: m.name };
  if (contextWindow) data.contextWindow = contextWindow;
  if (systemPromptUpdate) data.systemPromptUpdate = systemPromptUpdate;
  return { type: Types.requestContext, data };
}

/** One item of the agent's to-do list. */
export interface Todo { content: string; status: "pending" | "in_progress" | "completed" }

/** todoWrite is todo/write: the agent's whole to-do list. */
export function todoWrite(...todos: Todo[]): Input<{ todos: Todo[] }> {
  return { type: Types.todoWrite, data: { todos: todos.map((t) => ({ content: t.content, status: t.status })) } };
}

// ---- stored events ----

/** Event is one stored event: its canonical envelope, exactly as the log
 * holds it, and the members read from it. dataText is the data's own
 * text (lossless); data parses it on first use with JSON.parse, which
 * rounds numbers beyond a double's precision. */
export class Event {
  readonly seq: Seq;
  /** Milliseconds since the Unix epoch. */
  readonly time: number;
  readonly type: string;
  readonly surfaceOp?: SurfaceOp;
  readonly sourceEventSeqs?: Seq[];
  readonly ignorable: boolean;
  /** The envelope exactly as the server sent it. */
  readonly envelope: string;
  #data: unknown;
  #parsed = false;

  /** Event parses a canonical envelope. */
  constructor(envelope: string) {
    const e = JSON.parse(envelope) as { seq: number; time: number; type: string; surfaceOp?: SurfaceOp; sourceEventSeqs?: Seq[]; ignorable?: boolean };
    this.envelope = envelope;
    this.seq = e.seq;
    this.time = e.time;
    this.type = e.type;
    if (e.surfaceOp !== undefined) this.surfaceOp = e.surfaceOp;
    if (e.sourceEventSeqs !== undefined) this.sourceEventSeqs = e.sourceEventSeqs;
    this.ignorable = e.ignorable === true;
  }

  /** The text of data in the envelope, byte for byte. */
  get dataText(): string {
    const t = memberText(this.envelope, "data");
    if (t === undefined) throw new SyntaxError(`logbook: envelope of seq ${this.seq} has no data`);
    return t;
  }

  /** data parsed with JSON.parse (use dataText where numbers must survive). */
  get data(): unknown {
    if (!this.#parsed) {
      this.#data = JSON.parse(this.dataText);
      this.#parsed = true;
    }
    return this.#data;
  }
}
