// Mapping a framework's session key to a logbook session id.

import { createHash } from "node:crypto";

/** The longest session id logbook takes, in UTF-8 bytes (docs/architecture.md). */
export const MAX_SESSION_ID_BYTES = 80;

/** How many bytes of a key a hashed id keeps before its suffix. */
const KEPT_BYTES = 40;

/**
 * sessionIdFor returns the logbook session id of a framework key: the key
 * itself when it is a valid session id (1–80 bytes of UTF-8 without control
 * characters), else its first 40 bytes (cut at a character boundary, with
 * control characters and lone surrogates replaced by "_"), then "-" and
 * the first 16 hex digits of the SHA-256 of the key. The same key always gives the same id, and two
 * keys that differ give different ids except for a SHA-256 prefix
 * collision. The adapters keep the original key in the session's labels.
 */
export function sessionIdFor(key: string): string {
  const bytes = Buffer.from(key, "utf8");
  if (bytes.length > 0 && bytes.length <= MAX_SESSION_ID_BYTES && !hasControl(key) && bytes.toString("utf8") === key) {
    return key;
  }
  let kept = "";
  let size = 0;
  for (const ch of key) {
    // A lone surrogate (a one-unit string in U+D800–U+DFFF) has no UTF-8.
    const safe = hasControl(ch) || ch === "\uFFFD" || /^[\ud800-\udfff]$/.test(ch) ? "_" : ch;
    const n = Buffer.byteLength(safe, "utf8");
    if (size + n > KEPT_BYTES) break;
    kept += safe;
    size += n;
  }
  const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  return kept === "" ? hash : `${kept}-${hash}`;
}

function hasControl(s: string): boolean {
  return /[\u0000-\u001f\u007f]/.test(s);
}
