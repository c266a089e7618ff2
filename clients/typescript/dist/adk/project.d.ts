import type { Event as AdkEvent } from "@google/adk";
import type { Input } from "../events.js";
/** isLoopType reports whether Loop.fold reads events of type. */
export declare function isLoopType(type: string): boolean;
/** The loop state folded from a log: the open turn and step and the calls the open step announced. */
export declare class Loop {
    /** The open turn, or null. */
    turn: number | null;
    /** The highest turn so far. */
    lastTurn: number;
    /** The open step, or null. */
    step: number | null;
    /** The highest step of the open turn. */
    lastStep: number;
    /** The calls the open step announced, in order, and whether each has a result. */
    calls: Map<string, boolean>;
    /** fold moves the state past one event of type with data (only loop events count). */
    fold(type: string, data: unknown): void;
    /** clone returns an independent copy. */
    clone(): Loop;
}
/**
 * plan returns the typed events that record ADK event e after the loop
 * state l, and moves l past them. The rules:
 *
 * - content of role "user" without function responses (what the user
 *   said): the open turn is closed, a new turn starts with a user/message;
 * - content of role "model": a step (in the open turn, or a new one) with
 *   an assistant/message of the text, thought and function call parts, and
 *   a tool/call for each call; a reply without calls closes its step and
 *   its turn;
 * - function responses: a tool/result for each response to a call of the
 *   open step that has none yet; when every call has one, the step ends (and
 *   the turn too when ADK calls the event a final response);
 * - anything else (actions only, errors, responses to calls of an earlier
 *   step, other parts): no typed event; the ADK record alone keeps it.
 *
 * Calls left unanswered when a new step or turn must start get an error
 * tool/result (TOOL_OUTCOME_UNKNOWN), as the protocol requires every call
 * of a step to be answered before it ends.
 */
export declare function plan(l: Loop, e: AdkEvent, final: boolean): Input<unknown>[];
