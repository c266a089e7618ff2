/** The longest session id logbook takes, in UTF-8 bytes (docs/architecture.md). */
export declare const MAX_SESSION_ID_BYTES = 80;
/**
 * sessionIdFor returns the logbook session id of a framework key: the key
 * itself when it is a valid session id (1–80 bytes of UTF-8 without control
 * characters), else its first 40 bytes (cut at a character boundary, with
 * control characters and lone surrogates replaced by "_"), then "-" and
 * the first 16 hex digits of the SHA-256 of the key. The same key always gives the same id, and two
 * keys that differ give different ids except for a SHA-256 prefix
 * collision. The adapters keep the original key in the session's labels.
 */
export declare function sessionIdFor(key: string): string;
