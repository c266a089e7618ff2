// Lossless storage of ADK values (events, state deltas) as logbook data.
//
// An ADK event is a plain object that JSON almost carries: members whose
// value is undefined (createEvent writes `branch: undefined`), objects with
// a null prototype (the state delta trimTempDeltaState builds) and the
// signature symbol createEvent puts on an event are lost by
// JSON.stringify, and node's deepStrictEqual sees each of them. pack writes
// the JSON data beside notes of those three, and unpack puts them back, so
// what getSession returns is deep-equal (strictly) to what was appended.
import { createEvent } from "@google/adk";
import { RawJSON } from "../json.js";
// The symbols createEvent puts on an ADK event (its signature, which ADK's
// isEvent tests); read off an event rather than named here.
const signature = Object.getOwnPropertySymbols(createEvent({}));
/** signed reports whether v carries the signature createEvent gives an ADK event. */
export function signed(v) {
    return signature.length > 0 && signature.every((s) => v[s] === true);
}
/** sign puts the ADK event signature on v. */
export function sign(v) {
    for (const s of signature)
        v[s] = true;
}
/**
 * pack converts v to JSON data as JSON.stringify would read it (toJSON is
 * called, functions and symbols are left out), noting undefined members and
 * null-prototype objects. Integers beyond ±(2^53−1), which logbook refuses
 * as integer literals, are written in exponent form (the same double reads
 * back). It throws a TypeError naming the path for what JSON cannot hold:
 * NaN, ±Infinity, a bigint, a cycle. (−0 is written 0: logbook refuses
 * negative zero.)
 */
export function pack(v, what) {
    const notes = { undefined: [], nullPrototype: [] };
    const json = walk(v, [], notes, new Set(), what, "");
    const out = { json: json === undefined ? null : json };
    if (notes.undefined.length > 0)
        out.undefined = notes.undefined;
    if (notes.nullPrototype.length > 0)
        out.nullPrototype = notes.nullPrototype;
    return out;
}
function where(what, path) {
    return what + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
}
function walk(v, path, notes, seen, what, key) {
    if (v !== null && typeof v === "object" && typeof v.toJSON === "function") {
        v = v.toJSON(key);
    }
    switch (typeof v) {
        case "string":
        case "boolean":
            return v;
        case "number":
            if (!Number.isFinite(v))
                throw new TypeError(`adk: ${where(what, path)} is ${v}, which JSON cannot hold (logbook stores JSON)`);
            if (Number.isInteger(v) && !Number.isSafeInteger(v))
                return new RawJSON(v.toExponential());
            return v === 0 ? 0 : v;
        case "bigint":
            throw new TypeError(`adk: ${where(what, path)} is a bigint, which JSON cannot hold (logbook stores JSON)`);
        case "undefined":
        case "function":
        case "symbol":
            return undefined;
    }
    if (v === null)
        return null;
    const obj = v;
    if (seen.has(obj))
        throw new TypeError(`adk: ${where(what, path)} refers back to itself; JSON cannot hold a cycle`);
    seen.add(obj);
    try {
        if (Array.isArray(obj)) {
            return obj.map((el, i) => {
                const p = [...path, i];
                const out = walk(el, p, notes, seen, what, String(i));
                if (out !== undefined)
                    return out;
                if (el === undefined)
                    notes.undefined.push(p);
                return null;
            });
        }
        if (Object.getPrototypeOf(obj) === null)
            notes.nullPrototype.push(path);
        const out = {};
        for (const [k, el] of Object.entries(obj)) {
            const p = [...path, k];
            const j = walk(el, p, notes, seen, what, k);
            if (j !== undefined)
                out[k] = j;
            else if (el === undefined)
                notes.undefined.push(p);
        }
        return out;
    }
    finally {
        seen.delete(obj);
    }
}
/** unpack rebuilds the value pack wrote from its JSON data (as parsed) and notes. */
export function unpack(json, notes) {
    let root = json;
    // Null prototypes first, deepest first, so that the paths above stay valid.
    const nulls = [...(notes.nullPrototype ?? [])].sort((a, b) => b.length - a.length);
    for (const p of nulls) {
        const copy = Object.assign(Object.create(null), at(root, p));
        if (p.length === 0)
            root = copy;
        else
            at(root, p.slice(0, -1))[p[p.length - 1]] = copy;
    }
    for (const p of notes.undefined ?? []) {
        if (p.length === 0)
            return undefined;
        at(root, p.slice(0, -1))[p[p.length - 1]] = undefined;
    }
    return root;
}
function at(v, p) {
    for (const k of p)
        v = v[k];
    return v;
}
