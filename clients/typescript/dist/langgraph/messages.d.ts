import type { Input } from "../events.js";
import type { LoopState } from "./records.js";
/** The LangChain message fields the mapping reads (duck-typed: BaseMessage
 * and its subclasses, or their plain objects). */
interface LCMessage {
    type: string;
    id?: string;
    content: unknown;
    tool_calls?: {
        id?: string;
        name: string;
        args: unknown;
    }[];
    tool_call_id?: string;
    status?: string;
    response_metadata?: Record<string, unknown>;
    usage_metadata?: {
        input_tokens?: number;
        output_tokens?: number;
    };
}
/** isMessageList reports whether a channel value is a list of LangChain
 * messages, the value of a MessagesAnnotation channel. */
export declare function isMessageList(v: unknown): v is LCMessage[];
/** messageId is the logbook id of a LangChain message id: the id itself
 * when it fits (1–256 bytes), else "lc-" and the SHA-256 of it in hex. */
export declare function messageId(id: string): string;
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
export declare function messageInputs(messages: LCMessage[], loop: LoopState): Input<unknown>[];
export {};
