// The lossless codec of the ADK adapter: what JSON drops comes back.

import assert from "node:assert/strict";
import { test } from "node:test";

import { createEvent } from "@google/adk";

import { pack, sign, signed, unpack } from "../src/adk/codec.js";
import { encodeJSON } from "../src/json.js";

function roundTrip(v: unknown): unknown {
  const p = pack(v, "v");
  return unpack(JSON.parse(encodeJSON(p.json)), p);
}

test("pack and unpack keep undefined members, null prototypes and numbers JSON integers cannot hold", () => {
  const inner = Object.assign(Object.create(null) as object, { a: 1, gone: undefined, deeper: Object.assign(Object.create(null) as object, { b: [1, undefined, 3] }) });
  const v = { x: undefined, list: [undefined, { y: undefined }], inner, big: 2 ** 60, neg: -(2 ** 62), small: 1.5, date: new Date(0), fn: () => 1 };
  const back = roundTrip(v) as Record<string, unknown>;
  const { fn: _fn, date: _date, ...rest } = v;
  assert.deepStrictEqual({ ...back, date: undefined }, { ...rest, date: undefined });
  assert.equal(back["date"], "1970-01-01T00:00:00.000Z");
  assert.ok(!("fn" in back));
  const root = roundTrip(Object.assign(Object.create(null) as object, { k: undefined }));
  assert.equal(Object.getPrototypeOf(root), null);
  assert.deepStrictEqual(root, Object.assign(Object.create(null) as object, { k: undefined }));
  assert.equal(encodeJSON(pack(2 ** 60, "v").json), "1.152921504606847e+18");
});

test("pack refuses what JSON cannot hold, naming the place", () => {
  assert.throws(() => pack({ a: [1, NaN] }, "event"), /event\.a\[1\] is NaN/);
  assert.throws(() => pack({ a: Infinity }, "event"), /event\.a is Infinity/);
  assert.throws(() => pack({ n: 1n }, "state"), /state\.n is a bigint/);
  const cyc: Record<string, unknown> = {};
  cyc["self"] = cyc;
  assert.throws(() => pack(cyc, "event"), /event\.self refers back to itself/);
  // the same object twice (no cycle) is fine
  const shared = { s: 1 };
  assert.deepStrictEqual(roundTrip({ a: shared, b: shared }), { a: { s: 1 }, b: { s: 1 } });
});

test("the ADK event signature is read off createEvent and put back", () => {
  const e = createEvent({ author: "user" });
  assert.ok(signed(e));
  const plain = JSON.parse(JSON.stringify(e)) as object;
  assert.ok(!signed(plain));
  sign(plain);
  assert.ok(signed(plain));
  assert.deepStrictEqual(plain, { ...JSON.parse(JSON.stringify(e)), ...Object.fromEntries(Object.getOwnPropertySymbols(e).map((s) => [s, true])) });
});
