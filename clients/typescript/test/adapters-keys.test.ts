// sessionIdFor: a framework key becomes a logbook session id by the rule
// src/adapters/keys.ts documents.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { MAX_SESSION_ID_BYTES, sessionIdFor } from "../src/adapters/keys.js";

const hex16 = (key: string) => createHash("sha256").update(key, "utf8").digest("hex").slice(0, 16);

test("a valid session id is its own id", () => {
  for (const key of ["s1", "app/user/42", "é-ü ✓", "x".repeat(MAX_SESSION_ID_BYTES), "."]) {
    assert.equal(sessionIdFor(key), key);
  }
});

test("a key longer than 80 bytes keeps its first 40 bytes and a SHA-256 suffix", () => {
  const key = "k".repeat(81);
  const id = sessionIdFor(key);
  assert.equal(id, `${"k".repeat(40)}-${hex16(key)}`);
  assert.ok(Buffer.byteLength(id) <= MAX_SESSION_ID_BYTES);
  assert.equal(sessionIdFor(key), id, "the same key gives the same id");
  assert.notEqual(sessionIdFor("k".repeat(82)), id, "keys that share their first 40 bytes differ by the suffix");
});

test("the kept prefix is cut at a character boundary", () => {
  // 39 ASCII bytes and a 2-byte character: 41 bytes, so the character goes.
  const key = "a".repeat(39) + "é".repeat(30);
  const id = sessionIdFor(key);
  assert.equal(id, `${"a".repeat(39)}-${hex16(key)}`);
  assert.equal(Buffer.from(id, "utf8").toString("utf8"), id);
});

test("control characters map through the hash, replaced by _ in the prefix", () => {
  const key = "tab\there\nnew";
  assert.equal(sessionIdFor(key), `tab_here_new-${hex16(key)}`);
  assert.equal(sessionIdFor("\u0000"), `_-${hex16("\u0000")}`);
});

test("the empty key is the hash alone; a lone surrogate is replaced", () => {
  assert.equal(sessionIdFor(""), hex16(""));
  const key = "a\ud800b";
  const id = sessionIdFor(key);
  assert.match(id, /^a_b-[0-9a-f]{16}$/);
  assert.equal(Buffer.from(id, "utf8").toString("utf8"), id);
});
