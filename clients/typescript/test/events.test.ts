// Unit tests of the builders, the lossless JSON helpers, the SSE reader and
// follow's idle timeout (against an in-process HTTP server);
// server.test.ts checks the same builders against a real server.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { Client, encodeInput, encodeJSON, Event, events as ev, rawJSON } from "../src/index.js";
import { memberText } from "../src/json.js";
import { readEvents } from "../src/sse.js";

const model = { provider: "anthropic", name: "claude-sonnet-4" };

test("builders write the stored member order", () => {
  const cases: [ReturnType<typeof encodeInput>, string][] = [
    [encodeInput(ev.turnStart(1)), '{"type":"turn/start","data":{"turn":1}}'],
    [encodeInput(ev.turnEnd(2, ev.failed("E1", "boom"))), '{"type":"turn/end","data":{"turn":2,"reason":{"kind":"error","error":{"message":"boom","code":"E1"}}}}'],
    [encodeInput(ev.turnEnd(1, ev.abortedByHook("slow"))), '{"type":"turn/end","data":{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"hook","reason":"slow"}}}}'],
    [encodeInput(ev.userText("u1", "hi")), '{"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}'],
    [
      encodeInput(ev.assistantText(1, 1, "a1", model, "ok")),
      '{"type":"assistant/message","data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}},"stream":[]},"surfaceOp":"append"}',
    ],
    [
      encodeInput(ev.toolError(1, 1, "r1", "c1", "denied", { name: "PermissionError", code: "EACCES" })),
      '{"type":"tool/result","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","isError":true,"content":[{"type":"text","text":"denied"}],"source":{"kind":"tool","callId":"c1"}},"error":{"name":"PermissionError","code":"EACCES"}},"surfaceOp":"append"}',
    ],
    [
      encodeInput(ev.replacing(ev.toolResult(1, 1, "r1", "c1", "[pruned]"), 8, 8, 8)),
      '{"type":"tool/result","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"[pruned]"}],"source":{"kind":"tool","callId":"c1"}}},"surfaceOp":{"op":"replace","startSeq":8,"endSeq":8},"sourceEventSeqs":[8]}',
    ],
    [
      encodeInput(ev.developer(1, 1, "d1", 3, ev.toolAddition("grep"))),
      '{"type":"developer/message","data":{"turn":1,"step":1,"message":{"id":"d1","role":"developer","content":[{"type":"tool-addition","toolName":"grep"}],"source":{"kind":"tool-change"}},"headerSeq":3},"surfaceOp":"append"}',
    ],
    [encodeInput(ev.developer(1, 1, "d2", 3, ev.toolRemoval("grep"))), '{"type":"developer/message","data":{"turn":1,"step":1,"message":{"id":"d2","role":"developer","content":[{"type":"tool-removal","toolName":"grep"}],"source":{"kind":"tool-change"}}},"surfaceOp":"append"}'],
    [
      encodeInput(ev.requestHeader({ config: { temperature: 0.5, model: "m", provider: "p", maxTokens: 0 }, tools: [{ description: "d", name: "t" }] }, "initial")),
      '{"type":"request/header","data":{"header":{"config":{"provider":"p","model":"m","temperature":0.5},"tools":[{"name":"t","description":"d"}]},"reason":"initial"}}',
    ],
    [encodeInput(ev.requestContext(model, 200000)), '{"type":"request/context","data":{"provider":"anthropic","model":"claude-sonnet-4","contextWindow":200000}}'],
    [encodeInput(ev.todoWrite({ content: "a", status: "pending" })), '{"type":"todo/write","data":{"todos":[{"content":"a","status":"pending"}]}}'],
    [encodeInput(ev.assistantAttempt(1, 2, { dt: 1 })), '{"type":"assistant/attempt","data":{"turn":1,"step":2,"stream":[{"dt":1}]}}'],
    [encodeInput(ev.toolCall(1, 1, "c1", "ls", "{}")), '{"type":"tool/call","data":{"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{}"}}'],
    [encodeInput(ev.user("u2", "context", ev.image("image/png", new Uint8Array([1, 2, 3])))), '{"type":"user/message","data":{"id":"u2","role":"user","content":[{"type":"image","mediaType":"image/png","data":"AQID"}],"source":{"kind":"context"}},"surfaceOp":"append"}'],
  ];
  for (const [got, want] of cases) assert.equal(got, want);
});

test("RawJSON is written verbatim where a value goes", () => {
  const raw = '{"n":1.0e0,"big":123456789012345678901.0}';
  assert.equal(encodeJSON({ a: [rawJSON(raw), 1], b: undefined }), `{"a":[${raw},1]}`);
  assert.throws(() => encodeJSON({ x: NaN }), /not a JSON number/);
});

test("memberText finds a member's text without decoding it", () => {
  const doc = '{"seq":3,"s":"a\\"}{","data":{"n":1.0e0,"x":["]",{"y":"}"}]},"surfaceOp":"append"}';
  assert.equal(memberText(doc, "data"), '{"n":1.0e0,"x":["]",{"y":"}"}]}');
  assert.equal(memberText(doc, "surfaceOp"), '"append"');
  assert.equal(memberText(doc, "seq"), "3");
  assert.equal(memberText(doc, "nope"), undefined);
  const e = new Event('{"seq":7,"time":1,"type":"plugin:app/n","data":123456789012345678901,"ignorable":true}');
  assert.equal(e.dataText, "123456789012345678901");
  assert.equal(e.seq, 7);
  assert.equal(e.ignorable, true);
});

test("the SSE reader splits events across chunk boundaries and skips comments", async () => {
  const text = ": heartbeat\n\nid: 0\ndata: {\"a\":1}\n\nid: 1\r\ndata: x\r\ndata: y\r\n\r\n";
  const enc = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < enc.length; i += 5) c.enqueue(enc.slice(i, i + 5));
      c.close();
    },
  });
  const got = [];
  for await (const e of readEvents(body)) got.push(e);
  assert.deepEqual(got, [
    { id: "0", data: '{"a":1}' },
    { id: "1", data: "x\ny" },
  ]);
});

test("follow takes a silent stream for a dead connection and reconnects", async () => {
  const envelope = '{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}';
  let requests = 0;
  const srv = createServer((req, res) => {
    requests++;
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.flushHeaders();
    if (requests === 1) return; // headers, then silence
    assert.match(req.url ?? "", /from=0/);
    res.end(`id: 0\ndata: ${envelope}\n\n`);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  try {
    const { port } = srv.address() as { port: number };
    const s = new Client({ baseUrl: `http://127.0.0.1:${port}` }).session("s");
    const got = [];
    let reconnects = 0;
    for await (const e of s.follow({ to: 1, idleTimeoutMs: 200, onReconnect: () => reconnects++ })) got.push(e.envelope);
    assert.deepEqual(got, [envelope]);
    // The silent stream was reconnected (the envelope came on a later
    // one); under load the idle timer may also end an attempt that had
    // not connected yet.
    assert.equal(requests, 2);
    assert.ok(reconnects >= 1, `${reconnects} reconnects`);
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});
