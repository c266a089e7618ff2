import { type JSONValue } from "../json.js";
/** A member's place in a value: object member names and array indexes from the root. */
export type Path = (string | number)[];
/** What pack keeps beside the JSON data. */
export interface Notes {
    /** Members and array elements whose value was undefined. */
    undefined?: Path[];
    /** Objects whose prototype was null. */
    nullPrototype?: Path[];
}
/** The value in JSON data and the notes to restore it. */
export interface Packed extends Notes {
    json: JSONValue;
}
/** signed reports whether v carries the signature createEvent gives an ADK event. */
export declare function signed(v: object): boolean;
/** sign puts the ADK event signature on v. */
export declare function sign(v: object): void;
/**
 * pack converts v to JSON data as JSON.stringify would read it (toJSON is
 * called, functions and symbols are left out), noting undefined members and
 * null-prototype objects. Integers beyond ±(2^53−1), which logbook refuses
 * as integer literals, are written in exponent form (the same double reads
 * back). It throws a TypeError naming the path for what JSON cannot hold:
 * NaN, ±Infinity, a bigint, a cycle. (−0 is written 0: logbook refuses
 * negative zero.)
 */
export declare function pack(v: unknown, what: string): Packed;
/** unpack rebuilds the value pack wrote from its JSON data (as parsed) and notes. */
export declare function unpack(json: unknown, notes: Notes): unknown;
