import type { Event, Input } from "../events.js";
/** The model an assistant/message names as its source: the SDK's items do
 * not say which model wrote them. */
export interface MirrorModel {
    provider: string;
    name: string;
}
/** A call the open step announced: its name and arguments, and whether
 * a tool/call and a tool/result recorded it. */
interface Call {
    name: string;
    args: string;
    called: boolean;
    answered: boolean;
}
/** LoopState is the agent-loop state of docs/format.md folded from the
 * log's events (the adapter's own and the server's repairs alike): the open
 * turn and step, the highest numbers so far, and the open step's calls. */
export declare class LoopState {
    /** The open turn, or -1. */
    openTurn: number;
    /** The highest turn so far (0 before the first). */
    lastTurn: number;
    /** The open step, or -1. */
    openStep: number;
    /** The highest step of the open turn. */
    lastStep: number;
    /** The calls the open step announced, in order. */
    calls: Map<string, Call>;
    /** fold moves the state past one stored event. */
    fold(e: Event): void;
    /** unanswered returns the open step's calls without a result, in order. */
    unanswered(): string[];
    /** clone returns a copy that folds on its own. */
    clone(): LoopState;
}
/** The mirror writes the typed events of a run of items against a copy of
 * the loop state, so that a refused append leaves the adapter's own state
 * as it was. */
export declare class Mirror {
    #private;
    /** The events written so far, in order. */
    readonly out: Input<unknown>[];
    /** idPrefix names the record the items belong to; message ids are
     * "<idPrefix>-<index of the item>". */
    constructor(st: LoopState, model: MirrorModel, idPrefix: string);
    /** The loop state after the events written so far. */
    get state(): LoopState;
    /** items mirrors items, numbered from first. */
    items(items: readonly unknown[], first?: number): this;
}
export {};
