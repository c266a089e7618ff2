import { type JSONValue, type RawJSON } from "./json.js";
/** A seq: an event's position in its log, from 0, below 2^53. */
export type Seq = number;
/** How a surface event changes the model's view: "append", or the
 * replacement of the surface nodes startSeq … endSeq (inclusive). */
export type SurfaceOp = "append" | {
    op: "replace";
    startSeq: Seq;
    endSeq: Seq;
};
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
export declare const Types: {
    readonly turnStart: "turn/start";
    readonly turnEnd: "turn/end";
    readonly stepStart: "step/start";
    readonly stepEnd: "step/end";
    readonly systemMessage: "system/message";
    readonly developerMessage: "developer/message";
    readonly userMessage: "user/message";
    readonly assistantMessage: "assistant/message";
    readonly assistantAttempt: "assistant/attempt";
    readonly toolCall: "tool/call";
    readonly toolResult: "tool/result";
    readonly todoWrite: "todo/write";
    readonly requestHeader: "request/header";
    readonly requestContext: "request/context";
};
/** A text block. */
export interface TextBlock {
    type: "text";
    text: string;
}
/** An assistant's reasoning block, with the provider's signature if any. */
export interface ReasoningBlock {
    type: "reasoning";
    text: string;
    signature?: string;
}
/** An assistant's request to call a tool; arguments is the raw argument text. */
export interface ToolCallBlock {
    type: "tool-call";
    id: string;
    name: string;
    arguments: string;
}
/** An image; data is standard base64. */
export interface ImageBlock {
    type: "image";
    mediaType: string;
    data: string;
}
/** A developer message's block: tool toolName became available. */
export interface ToolAdditionBlock {
    type: "tool-addition";
    toolName: string;
}
/** A developer message's block: tool toolName went away. */
export interface ToolRemovalBlock {
    type: "tool-removal";
    toolName: string;
}
/** An opaque block of a plugin, type "plugin:<name>". */
export interface PluginBlock {
    type: `plugin:${string}`;
    [member: string]: JSONValue | undefined;
}
/** One content block of a message. */
export type Block = TextBlock | ReasoningBlock | ToolCallBlock | ImageBlock | ToolAdditionBlock | ToolRemovalBlock | PluginBlock;
/** text is a text block. */
export declare function text(text: string): TextBlock;
/** reasoning is a reasoning block; signature "" (the default) writes none. */
export declare function reasoning(text: string, signature?: string): ReasoningBlock;
/** toolCallBlock is an assistant's call of tool name with the raw argument text. */
export declare function toolCallBlock(id: string, name: string, args: string): ToolCallBlock;
/** image is an image block of mediaType; data is the image's bytes, written in base64. */
export declare function image(mediaType: string, data: Uint8Array): ImageBlock;
/** toolAddition says that tool name became available (Developer with a headerSeq). */
export declare function toolAddition(name: string): ToolAdditionBlock;
/** toolRemoval says that tool name went away. */
export declare function toolRemoval(name: string): ToolRemovalBlock;
/** pluginBlock is the opaque block "plugin:<name>" with members after type. */
export declare function pluginBlock(name: string, members?: {
    [member: string]: JSONValue;
}): PluginBlock;
/** Where a message came from. */
export type Source = {
    kind: "system-prompt";
} | {
    kind: "tool-change";
} | {
    kind: "model";
    provider: string;
    model: string;
} | {
    kind: "tool";
    callId: string;
} | {
    kind: string;
    [member: string]: JSONValue | undefined;
};
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
export interface Model {
    provider: string;
    name: string;
}
/** Token usage of a model call; cacheRead and cacheWrite only when not 0. */
export interface Usage {
    input: number;
    output: number;
    cacheRead?: number;
    cacheWrite?: number;
}
/** Why a turn ended: make one with completed(), abortedByUser(), … */
export type Reason = {
    kind: "completed" | "blocked" | "max-tokens" | "interrupted" | "forked";
} | {
    kind: "aborted";
    cause: {
        kind: "user" | "parent" | "disposed";
    } | {
        kind: "hook";
        reason: string;
    };
} | {
    kind: "error";
    error: {
        message: string;
        code: string;
    };
} | {
    kind: `plugin:${string}`;
    [member: string]: JSONValue | undefined;
};
/** The reason of a turn the agent loop finished normally. */
export declare const completed: () => Reason;
/** The reason of a turn the user stopped. */
export declare const abortedByUser: () => Reason;
/** The reason of a turn its parent stopped. */
export declare const abortedByParent: () => Reason;
/** The reason of a turn stopped because its agent was disposed. */
export declare const abortedDisposed: () => Reason;
/** The reason of a turn a hook stopped, saying why. */
export declare const abortedByHook: (why: string) => Reason;
/** The reason of a turn a hook or policy blocked. */
export declare const blocked: () => Reason;
/** The reason of a failed turn; a failure not from the model has code "UNKNOWN". */
export declare const failed: (code: string, message: string) => Reason;
/** The reason of a turn whose step hit the output token cap. */
export declare const maxTokens: () => Reason;
/** The reason crash repair writes; a harness does not write it. */
export declare const interrupted: () => Reason;
/** The reason a fork writes when it closes a turn it cut. */
export declare const forked: () => Reason;
/** The reason "plugin:<name>" of a plugin, with members after kind. */
export declare const pluginReason: (name: string, members?: {
    [member: string]: JSONValue;
}) => Reason;
/** Data of turn/start. */
export interface TurnStartData {
    turn: number;
}
/** Data of turn/end. */
export interface TurnEndData {
    turn: number;
    reason: Reason;
}
/** Data of step/start and step/end. */
export interface StepData {
    turn: number;
    step: number;
}
/** turnStart is turn/start: turn begins. */
export declare function turnStart(turn: number): Input<TurnStartData>;
/** turnEnd is turn/end: turn is over, for reason. */
export declare function turnEnd(turn: number, reason: Reason): Input<TurnEndData>;
/** stepStart is step/start: step of turn begins. */
export declare function stepStart(turn: number, step: number): Input<StepData>;
/** stepEnd is step/end: step of turn is over. */
export declare function stepEnd(turn: number, step: number): Input<StepData>;
/** Data of system/message and developer/message. */
export interface MessageData extends StepData {
    message: Message;
    headerSeq?: Seq;
}
/** Data of assistant/message. */
export interface AssistantData extends StepData {
    message: Message;
    stream: JSONValue[];
    usage?: Usage;
    interrupted?: true;
}
/** Data of assistant/attempt. */
export interface AttemptData extends StepData {
    stream: JSONValue[];
}
/** system is system/message: the system prompt as message id with one text block. */
export declare function system(turn: number, step: number, id: string, prompt: string): Input<MessageData>;
/** developer is developer/message: tools became available (toolAddition
 * blocks, which need headerSeq, the request/header declaring them) or went
 * away (toolRemoval); headerSeq is written only when a block adds a tool. */
export declare function developer(turn: number, step: number, id: string, headerSeq: Seq, ...content: Block[]): Input<MessageData>;
/** user is user/message: message id with content; kind is the source kind,
 * "prompt" for what the user asked or e.g. "context" for injected context. */
export declare function user(id: string, kind: string, ...content: Block[]): Input<Message>;
/** userText is user/message: the user's prompt text as message id. */
export declare function userText(id: string, prompt: string): Input<Message>;
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
export declare function assistant(turn: number, step: number, r: Reply): Input<AssistantData>;
/** assistantText is assistant/message: reply id of model m with one text block. */
export declare function assistantText(turn: number, step: number, id: string, m: Model, reply: string): Input<AssistantData>;
/** assistantAttempt is assistant/attempt: a model call that settled
 * without a message on the surface, with its stream records. */
export declare function assistantAttempt(turn: number, step: number, ...stream: JSONValue[]): Input<AttemptData>;
/** Data of tool/call. */
export interface ToolCallData extends StepData {
    callId: string;
    name: string;
    arguments: string;
}
/** toolCall is tool/call: execution of call callID has started. */
export declare function toolCall(turn: number, step: number, callID: string, name: string, args: string): Input<ToolCallData>;
/** The error of a failed tool call. */
export interface ToolFailure {
    name: string;
    code: string;
    reason?: string;
}
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
export interface ToolResultData extends StepData {
    message: Message;
    error?: ToolFailure;
    meta?: JSONValue;
}
/** tool is tool/result: the result m of a tool call in step of turn. */
export declare function tool(turn: number, step: number, m: ToolMessage): Input<ToolResultData>;
/** toolResult is tool/result: the successful result of call callID as message id. */
export declare function toolResult(turn: number, step: number, id: string, callID: string, result: string): Input<ToolResultData>;
/** toolError is tool/result: call callID failed; text tells the model,
 * failure (optional) is the error. */
export declare function toolError(turn: number, step: number, id: string, callID: string, message: string, failure?: ToolFailure): Input<ToolResultData>;
/** replacing returns input as the replacement of the surface nodes start
 * … end instead of an append, shadowing the events listed. */
export declare function replacing<D>(input: Input<D>, start: Seq, end: Seq, ...shadowed: Seq[]): Input<D>;
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
export interface ToolSchema {
    name: string;
    description?: string;
    parameters?: JSONValue | RawJSON;
    deferLoading?: true;
}
/** The request settings of a request/header. */
export interface Header {
    config: Config;
    adapterDefaults?: {
        reasoningEffort?: true;
        maxTokens?: true;
    };
    tools?: ToolSchema[];
}
/** Data of request/header. */
export interface RequestHeaderData {
    header: Header;
    reason: HeaderReason;
    startsSeries?: true;
}
/** requestHeader is request/header: settings h are in force from here on;
 * startsSeries marks a request with reason initial, resume or change that
 * also starts a new message series. */
export declare function requestHeader(h: Header, reason: HeaderReason, startsSeries?: boolean): Input<RequestHeaderData>;
/** Data of request/context. */
export interface RequestContextData {
    provider: string;
    model: string;
    contextWindow?: number;
    systemPromptUpdate?: string;
}
/** requestContext is request/context: the model and context window facts,
 * written next to a request/header when they change. */
export declare function requestContext(m: Model, contextWindow?: number, systemPromptUpdate?: string): Input<RequestContextData>;
/** One item of the agent's to-do list. */
export interface Todo {
    content: string;
    status: "pending" | "in_progress" | "completed";
}
/** todoWrite is todo/write: the agent's whole to-do list. */
export declare function todoWrite(...todos: Todo[]): Input<{
    todos: Todo[];
}>;
/** Event is one stored event: its canonical envelope, exactly as the log
 * holds it, and the members read from it. dataText is the data's own
 * text (lossless); data parses it on first use with JSON.parse, which
 * rounds numbers beyond a double's precision. */
export declare class Event {
    #private;
    readonly seq: Seq;
    /** Milliseconds since the Unix epoch. */
    readonly time: number;
    readonly type: string;
    readonly surfaceOp?: SurfaceOp;
    readonly sourceEventSeqs?: Seq[];
    readonly ignorable: boolean;
    /** The envelope exactly as the server sent it. */
    readonly envelope: string;
    /** Event parses a canonical envelope. */
    constructor(envelope: string);
    /** The text of data in the envelope, byte for byte. */
    get dataText(): string;
    /** data parsed with JSON.parse (use dataText where numbers must survive). */
    get data(): unknown;
}
