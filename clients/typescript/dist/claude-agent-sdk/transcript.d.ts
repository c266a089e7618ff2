import * as ev from "../events.js";
import { type JSONValue } from "../json.js";
/** The event type of a stored transcript line: an ignorable type logbook
 * does not know (class U in docs/format.md), whose data is the line. */
export declare const ENTRY_TYPE = "claude-code/entry";
/** A transcript line, as the SDK hands it to a SessionStore. */
export interface Entry {
    type: string;
    uuid?: string;
    [member: string]: unknown;
}
/**
 * Where the typed events of the next line go: the turn (one per user
 * prompt), the step (one per model reply; Claude Code writes a reply's
 * content blocks as lines of their own that share its message.id) and the
 * lines already stored, by uuid. It is a fold of the stored lines, so the
 * same lines in the same order always give the same events.
 */
export interface Loop {
    turn: number;
    step: number;
    /** The message.id of the last assistant line. */
    reply: string | undefined;
    /** The uuids of the lines stored. */
    stored: Set<string>;
}
/** newLoop is the state before the first line. */
export declare function newLoop(): Loop;
/**
 * plan returns the appends that store entry: one or more groups, the first
 * starting with the line's record; each holds at most one surface event
 * (docs/format.md, "The order of checks"), so a user line answering several
 * tool calls takes a group per result. It advances loop's turn, step and
 * reply past the line; the caller adds the uuid to loop.stored once the
 * line is stored.
 */
export declare function plan(loop: Loop, entry: Entry): ev.Input<unknown>[][];
/**
 * entryData returns v as the JSON logbook stores. A transcript line is JSON
 * that JSON.parse read, so its numbers are doubles: an integer beyond 2^53,
 * which logbook refuses as an integer literal (JSON_UNSAFE_INTEGER), is
 * written in exponent form, which reads back as the same double; -0 is
 * written as 0, as JSON.stringify writes it.
 */
export declare function entryData(v: unknown): JSONValue;
