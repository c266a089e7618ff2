"""Unit tests of the builders and the lossless JSON helpers;
test_server.py checks the builders against a real server."""

import unittest
from decimal import Decimal

from logbook_client import Event, RawJSON, encode_input, encode_json, loads_lossless, member_text
from logbook_client import events as ev
from logbook_client.client import _server_events

MODEL = ev.Model("anthropic", "claude-sonnet-4")


class BuilderTest(unittest.TestCase):
    def test_builders_write_the_stored_member_order(self):
        cases = [
            (ev.turn_start(1), '{"type":"turn/start","data":{"turn":1}}'),
            (ev.turn_end(2, ev.failed("E1", "boom")), '{"type":"turn/end","data":{"turn":2,"reason":{"kind":"error","error":{"message":"boom","code":"E1"}}}}'),
            (ev.user_text("u1", "hi"), '{"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}'),
            (ev.assistant_text(1, 1, "a1", MODEL, "ok"),
             '{"type":"assistant/message","data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}},"stream":[]},"surfaceOp":"append"}'),
            (ev.tool_error(1, 1, "r1", "c1", "denied", ev.ToolFailure("PermissionError", "EACCES")),
             '{"type":"tool/result","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","isError":true,"content":[{"type":"text","text":"denied"}],"source":{"kind":"tool","callId":"c1"}},"error":{"name":"PermissionError","code":"EACCES"}},"surfaceOp":"append"}'),
            (ev.replacing(ev.tool_result(1, 1, "r1", "c1", "[pruned]"), 8, 8, 8),
             '{"type":"tool/result","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"[pruned]"}],"source":{"kind":"tool","callId":"c1"}}},"surfaceOp":{"op":"replace","startSeq":8,"endSeq":8},"sourceEventSeqs":[8]}'),
            (ev.developer(1, 1, "d1", 3, ev.tool_addition("grep")),
             '{"type":"developer/message","data":{"turn":1,"step":1,"message":{"id":"d1","role":"developer","content":[{"type":"tool-addition","toolName":"grep"}],"source":{"kind":"tool-change"}},"headerSeq":3},"surfaceOp":"append"}'),
            (ev.request_header(ev.Header(ev.Config("p", "m", temperature=0.5), tools=[ev.ToolSchema("t", "d")]), "initial"),
             '{"type":"request/header","data":{"header":{"config":{"provider":"p","model":"m","temperature":0.5},"tools":[{"name":"t","description":"d"}]},"reason":"initial"}}'),
            (ev.request_context(MODEL, 200000), '{"type":"request/context","data":{"provider":"anthropic","model":"claude-sonnet-4","contextWindow":200000}}'),
            (ev.todo_write(ev.Todo("a", "pending")), '{"type":"todo/write","data":{"todos":[{"content":"a","status":"pending"}]}}'),
            (ev.tool_call(1, 1, "c1", "ls", "{}"), '{"type":"tool/call","data":{"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{}"}}'),
            (ev.user("u2", "context", ev.image("image/png", b"\x01\x02\x03")),
             '{"type":"user/message","data":{"id":"u2","role":"user","content":[{"type":"image","mediaType":"image/png","data":"AQID"}],"source":{"kind":"context"}},"surfaceOp":"append"}'),
        ]
        for got, want in cases:
            self.assertEqual(encode_input(got), want)

    def test_raw_json_is_written_verbatim(self):
        raw = '{"n":1.0e0,"big":123456789012345678901.0}'
        self.assertEqual(encode_json({"a": [RawJSON(raw), 1], "s": "é\u2028"}), '{"a":[%s,1],"s":"é\u2028"}' % raw)
        with self.assertRaises(ValueError):
            encode_json(float("nan"))
        self.assertEqual(loads_lossless("123456789012345678901.0"), Decimal("123456789012345678901.0"))

    def test_member_text_finds_a_members_text(self):
        doc = '{"seq":3,"s":"a\\"}{","data":{"n":1.0e0,"x":["]",{"y":"}"}]},"surfaceOp":"append"}'
        self.assertEqual(member_text(doc, "data"), '{"n":1.0e0,"x":["]",{"y":"}"}]}')
        self.assertEqual(member_text(doc, "surfaceOp"), '"append"')
        self.assertIsNone(member_text(doc, "nope"))
        e = Event.parse('{"seq":7,"time":1,"type":"plugin:app/n","data":123456789012345678901,"ignorable":true}')
        self.assertEqual((e.seq, e.data_text, e.data, e.ignorable), (7, "123456789012345678901", 123456789012345678901, True))

    def test_server_events_skip_comments_and_stop_at_a_cut_line(self):
        lines = [b": heartbeat\n", b"\n", b"id: 0\n", b'data: {"a":1}\n', b"\n", b"id: 1\r\n", b"data: x\r\n", b"data: y\r\n", b"\r\n", b"id: 2\n", b"data: cut"]
        self.assertEqual(list(_server_events(iter(lines))), ['{"a":1}', "x\ny"])


if __name__ == "__main__":
    unittest.main()
