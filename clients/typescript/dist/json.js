// Lossless JSON helpers. JavaScript's JSON.parse turns every number into a
// double, so 123456789012345678901 and 1.0e0 cannot survive a parse and a
// stringify; these helpers let a caller hand logbook JSON text verbatim
// (RawJSON) and read a member's text out of a document without decoding it
// (memberText). Node 20 has no JSON.rawJSON, which would do the first.
/** RawJSON is JSON text a caller wants sent as written (number literals and
 * member order kept), anywhere a JSON value goes in an input. The server
 * validates it; invalid text is rejected there with the JSON rule it breaks. */
export class RawJSON {
    /** The JSON text, exactly as it will be sent. */
    text;
    constructor(text) {
        this.text = text;
    }
}
/** rawJSON wraps JSON text to be sent verbatim (see RawJSON). */
export function rawJSON(text) {
    return new RawJSON(text);
}
/** encodeJSON writes v as JSON text: like JSON.stringify, except that a
 * RawJSON is written verbatim and a non-finite number is an error instead
 * of null. Object members keep their insertion order; undefined members
 * are left out. */
export function encodeJSON(v) {
    if (v instanceof RawJSON)
        return v.text;
    if (v === null || typeof v === "boolean" || typeof v === "string")
        return JSON.stringify(v);
    if (typeof v === "number") {
        if (!Number.isFinite(v))
            throw new TypeError(`logbook: ${v} is not a JSON number`);
        return JSON.stringify(v);
    }
    if (Array.isArray(v))
        return "[" + v.map((el) => (el === undefined ? "null" : encodeJSON(el))).join(",") + "]";
    if (typeof v === "object") {
        const parts = [];
        for (const [k, el] of Object.entries(v)) {
            if (el !== undefined)
                parts.push(JSON.stringify(k) + ":" + encodeJSON(el));
        }
        return "{" + parts.join(",") + "}";
    }
    throw new TypeError(`logbook: a ${typeof v} is not a JSON value`);
}
/** memberText returns the text of member name of the JSON object text
 * (its first occurrence at the top level), undefined when there is none.
 * It scans, it does not validate: text is a document the server wrote. */
export function memberText(text, name) {
    let i = skipSpace(text, 0);
    if (text[i] !== "{")
        return undefined;
    i = skipSpace(text, i + 1);
    while (i < text.length && text[i] !== "}") {
        const keyEnd = skipString(text, i);
        const key = JSON.parse(text.slice(i, keyEnd));
        i = skipSpace(text, keyEnd);
        i = skipSpace(text, i + 1); // the colon
        const end = skipValue(text, i);
        if (key === name)
            return text.slice(i, end);
        i = skipSpace(text, end);
        if (text[i] === ",")
            i = skipSpace(text, i + 1);
    }
    return undefined;
}
function skipSpace(s, i) {
    while (i < s.length && (s[i] === " " || s[i] === "\n" || s[i] === "\r" || s[i] === "\t"))
        i++;
    return i;
}
// skipString returns the index after the string that starts at i.
function skipString(s, i) {
    for (i++; i < s.length; i++) {
        if (s[i] === "\\")
            i++;
        else if (s[i] === '"')
            return i + 1;
    }
    throw new SyntaxError("logbook: unterminated string in a server document");
}
// skipValue returns the index after the JSON value that starts at i.
function skipValue(s, i) {
    const c = s[i];
    if (c === '"')
        return skipString(s, i);
    if (c === "{" || c === "[") {
        let depth = 0;
        for (; i < s.length; i++) {
            const d = s[i];
            if (d === '"')
                i = skipString(s, i) - 1;
            else if (d === "{" || d === "[")
                depth++;
            else if (d === "}" || d === "]") {
                depth--;
                if (depth === 0)
                    return i + 1;
            }
        }
        throw new SyntaxError("logbook: unterminated value in a server document");
    }
    while (i < s.length && !",}] \n\r\t".includes(s[i]))
        i++;
    return i;
}
