/** RawJSON is JSON text a caller wants sent as written (number literals and
 * member order kept), anywhere a JSON value goes in an input. The server
 * validates it; invalid text is rejected there with the JSON rule it breaks. */
export declare class RawJSON {
    /** The JSON text, exactly as it will be sent. */
    readonly text: string;
    constructor(text: string);
}
/** rawJSON wraps JSON text to be sent verbatim (see RawJSON). */
export declare function rawJSON(text: string): RawJSON;
/** A JSON value as a builder or caller writes it: plain JSON data, with
 * RawJSON anywhere for text sent as written. */
export type JSONValue = null | boolean | number | string | RawJSON | readonly JSONValue[] | {
    readonly [key: string]: JSONValue | undefined;
};
/** encodeJSON writes v as JSON text: like JSON.stringify, except that a
 * RawJSON is written verbatim and a non-finite number is an error instead
 * of null. Object members keep their insertion order; undefined members
 * are left out. */
export declare function encodeJSON(v: unknown): string;
/** memberText returns the text of member name of the JSON object text
 * (its first occurrence at the top level), undefined when there is none.
 * It scans, it does not validate: text is a document the server wrote. */
export declare function memberText(text: string, name: string): string | undefined;
