"""The client against a real `logbook serve` (see serve.py)."""

import json
import os
import tempfile
import unittest
import urllib.parse
import urllib.request
from unittest import mock

from logbook_client import Client, LogbookError, RawJSON, encode_json, member_text, retryable
from logbook_client import events as ev

from .serve import Server, free_addr, remove_bin

MODEL = ev.Model("anthropic", "claude-sonnet-4")


def a_turn(turn: int) -> list:
    """One whole turn with a tool call, built with the builders."""
    return [
        ev.turn_start(turn),
        ev.user_text(f"u{turn}", "list the files"),
        ev.step_start(turn, 1),
        ev.assistant(turn, 1, ev.Reply(f"a{turn}", MODEL, [ev.tool_call_block(f"c{turn}", "ls", '{"dir":"."}')], usage=ev.Usage(10, 3))),
        ev.tool_call(turn, 1, f"c{turn}", "ls", '{"dir":"."}'),
        ev.tool_result(turn, 1, f"r{turn}", f"c{turn}", "README.md go.mod"),
        ev.step_end(turn, 1),
        ev.step_start(turn, 2),
        ev.assistant_text(turn, 2, f"a{turn}b", MODEL, "README.md and go.mod"),
        ev.step_end(turn, 2),
        ev.turn_end(turn, ev.completed()),
    ]


def a_rewrite() -> list:
    """One turn whose tool result (seq 5) a rewrite replaces (seq 6)."""
    return [
        ev.turn_start(1),
        ev.user_text("u1", "list the files"),
        ev.step_start(1, 1),
        ev.assistant(1, 1, ev.Reply("a1", MODEL, [ev.tool_call_block("c1", "ls", "{}")])),
        ev.tool_call(1, 1, "c1", "ls", "{}"),
        ev.tool_result(1, 1, "r1", "c1", "a.txt b.txt"),
        ev.replacing(ev.tool_result(1, 1, "r1", "c1", "[2 files]"), 5, 5, 5),
        ev.step_end(1, 1),
        ev.turn_end(1, ev.completed()),
    ]


def note(n: int) -> ev.Input:
    """An ignorable log-only event."""
    return ev.Input("app/note", n, ignorable=True)


def setUpModule():
    global srv, lb
    srv = Server()
    lb = Client(srv.url)


def tearDownModule():
    srv.stop()
    srv.remove_data()
    remove_bin()


class ServerTest(unittest.TestCase):
    def test_create_append_messages(self):
        s = lb.create(id="py-basic", cwd="/work")
        self.assertEqual((s.header["id"], s.header["cwd"]), ("py-basic", "/work"))
        inputs = a_turn(1)
        evs = s.append(inputs, expected_seq=0, flush=True)
        self.assertEqual([e.seq for e in evs], list(range(len(inputs))))
        for e, i in zip(evs, inputs):
            self.assertEqual(e.type, i.type)
            self.assertEqual(e.data_text, encode_json(i.data), f"seq {e.seq}: the stored data is what the builder wrote")
        user = {"id": "u1", "role": "user", "content": [{"type": "text", "text": "list the files"}], "source": {"kind": "prompt"}}
        msgs = s.messages()
        self.assertEqual(msgs, [
            user,
            {"id": "a1", "role": "assistant", "content": [{"type": "tool-call", "id": "c1", "name": "ls", "arguments": '{"dir":"."}'}], "source": {"kind": "model", "provider": "anthropic", "model": "claude-sonnet-4"}},
            {"id": "r1", "role": "tool", "toolCallId": "c1", "content": [{"type": "text", "text": "README.md go.mod"}], "source": {"kind": "tool", "callId": "c1"}},
            {"id": "a1b", "role": "assistant", "content": [{"type": "text", "text": "README.md and go.mod"}], "source": {"kind": "model", "provider": "anthropic", "model": "claude-sonnet-4"}},
        ])
        self.assertEqual(s.messages(at=1), [user])
        info = s.info()
        self.assertEqual((info["length"], info["live"]), (len(inputs), True))
        self.assertEqual([e.envelope for e in s.events(3, 5)], [e.envelope for e in evs[3:5]])
        self.assertEqual(s.surface(), [1, 3, 5, 8])
        self.assertIsNone(s.inspect()["openTurn"])
        self.assertEqual(s.flush()["backends"][0]["durableSeq"], len(inputs) - 1)
        child = s.fork(at=1, as_id="py-basic-child")
        self.assertEqual(child.id, "py-basic-child")
        self.assertEqual(child.messages(), [user])
        page = lb.list(limit=1)
        self.assertEqual(len(page["sessions"]), 1)
        self.assertIsNotNone(page["nextCursor"])
        child.release()

    def test_every_post_says_its_content_type(self):
        """Body or not: flush and release pass a server that requires it."""
        posts = []
        real = urllib.request.urlopen

        def recording(req, *a, **kw):
            if req.get_method() == "POST":
                path = urllib.parse.urlsplit(req.full_url).path
                posts.append(path.rsplit("/", 1)[-1] + " " + str(req.get_header("Content-type")))
            return real(req, *a, **kw)

        with mock.patch("urllib.request.urlopen", recording):
            s = lb.create(id="py-media-type")
            s.append([ev.turn_start(1)])
            child = s.fork(as_id="py-media-type-child")
            self.assertEqual(s.flush()["backends"][0]["durableSeq"], 0)
            s.release()
            child.release()
        self.assertEqual(posts, [
            "sessions application/json",
            "events application/x-ndjson",
            "fork application/json",
            "flush application/json",
            "release application/json",
            "release application/json",
        ])
        self.assertFalse(s.info()["live"])

    def test_dot_sessions_are_reached_like_any_other(self):
        for id in (".", ".."):
            s = lb.create(id=id)
            self.assertEqual(s.append([ev.turn_start(1)])[0].seq, 0)
            self.assertEqual(s.info()["id"], id)
            self.assertEqual(s.flush()["backends"][0]["durableSeq"], 0)
            s.release()
            stored = lb.session(id)
            self.assertEqual([e.type for e in stored.events()], ["turn/start"])
            self.assertEqual(stored.surface(), [])

    def test_too_many_live_sessions_is_retryable(self):
        self.assertTrue(retryable(LogbookError({"code": "TOO_MANY_LIVE_SESSIONS", "status": 503, "detail": "max_live_sessions 1000 reached"})))
        self.assertFalse(retryable(LogbookError({"code": "SESSION_NOT_FOUND", "status": 404, "detail": ""})))

    def test_documents_come_back_byte_for_byte(self):
        s = lb.create()
        doc = '{"n":1.0e0,"big":123456789012345678901.0,"b":1,"a":2}'
        [e] = s.append([ev.Input("plugin:app/note", RawJSON(doc), ignorable=True)])
        self.assertEqual(e.data_text, doc)
        self.assertEqual(s.events()[0].envelope, e.envelope)
        meta = '{"size":123456789012345678901.0,"ratio":2.50}'
        evs = s.append([
            ev.turn_start(1), ev.step_start(1, 1),
            ev.assistant(1, 1, ev.Reply("a1", MODEL, [ev.tool_call_block("c1", "stat", "{}")])),
            ev.tool_call(1, 1, "c1", "stat", "{}"),
            ev.tool(1, 1, ev.ToolMessage("r1", "c1", [ev.text("ok")], meta=RawJSON(meta))),
        ])
        self.assertTrue(evs[4].data_text.endswith(',"meta":%s}' % meta), evs[4].data_text)
        self.assertEqual(s.text("messages"), "[%s,%s]" % (member_text(evs[2].data_text, "message"), member_text(evs[4].data_text, "message")))

    def test_expected_seq_conflict(self):
        s = lb.create()
        s.append([ev.turn_start(1)])
        with self.assertRaises(LogbookError) as cm:
            s.append([ev.turn_start(2)], expected_seq=0)
        e = cm.exception
        self.assertEqual((e.code, e.status, e.expected, e.actual, e.appended, e.first_seq), ("SEQ_CONFLICT", 409, 0, 1, 0, 1))
        self.assertEqual(s.info()["length"], 1)

    def test_append_retry_never_duplicates(self):
        s = lb.create()
        inputs = a_turn(1)
        first = s.append_retry(0, inputs, flush=True)
        retries = []
        again = s.append_retry(0, inputs, flush=True, on_retry=lambda e: retries.append(e.code))  # as after a lost reply
        self.assertEqual([e.envelope for e in again], [e.envelope for e in first])
        self.assertEqual(retries, ["SEQ_CONFLICT"])
        self.assertEqual(s.info()["length"], len(inputs))
        turn2, at = a_turn(2), len(inputs)
        s.append(turn2[:3], expected_seq=at)  # only part of it made it
        self.assertEqual([e.seq for e in s.append_retry(at, turn2)], list(range(at, at + len(turn2))))
        end = at + len(turn2)
        s.append([ev.turn_start(3)])  # another writer
        with self.assertRaises(LogbookError) as cm:
            s.append_retry(end, [ev.turn_start(4)])
        self.assertEqual((cm.exception.code, cm.exception.appended), ("SEQ_CONFLICT", 0))
        self.assertEqual(s.info()["length"], end + 1)

    def test_bad_input_is_the_servers_problem(self):
        s = lb.create()
        with self.assertRaises(LogbookError) as cm:
            s.append([ev.turn_start(1), ev.Input("turn/start", {"turn": "one"}), ev.turn_end(1, ev.completed())])
        e = cm.exception
        self.assertEqual((e.status, e.code, e.line, e.index, e.appended, e.first_seq), (422, "PAYLOAD_INVALID", 2, 1, 1, 0))
        self.assertEqual(s.info()["length"], 1)
        with self.assertRaises(LogbookError) as cm:
            lb.session("no-such-session").messages()
        self.assertEqual((cm.exception.code, cm.exception.status), ("SESSION_NOT_FOUND", 404))

    def test_follow_resumes_after_the_server_is_killed(self):
        addr = free_addr()
        own = Server(addr)
        try:
            s = Client(own.url).create(id="py-follow")
            before = s.append(a_turn(1), flush=True)
            reconnects = []
            follow = s.follow(max_backoff=0.2, on_reconnect=reconnects.append)
            got = [next(follow) for _ in before]
            own.kill()  # the stream drops mid-follow
            own = Server(addr, own.data_dir)
            # The first append after the restart resumes the session, which
            # appends its own events first; the follower sees them all.
            later = s.append(a_turn(2), flush=True)
            log = s.events()
            while len(got) < len(log):
                got.append(next(follow))
            follow.close()
            self.assertGreaterEqual(len(reconnects), 1)
            self.assertEqual([e.envelope for e in got], [e.envelope for e in log])
            self.assertEqual(log[:len(before)], before)
            self.assertEqual(log[-len(later):], later)
        finally:
            own.stop()
            own.remove_data()


if __name__ == "__main__":
    unittest.main()


class TokenAndRetryTest(unittest.TestCase):
    def test_a_token_server_refuses_a_client_without_it(self):
        token = "a-test-token-of-32-bytes-0123456"
        data = tempfile.mkdtemp(prefix="logbook-py-data-")
        path = os.path.join(data, "token")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(token + "\n")
        own = Server(data_dir=data, args=["--token-file", path])
        try:
            with self.assertRaises(LogbookError) as cm:
                Client(own.url).create()
            self.assertEqual((cm.exception.code, cm.exception.status), ("UNAUTHENTICATED", 401))
            s = Client(own.url, token=token).create(id="py-token")
            self.assertEqual(s.append([ev.turn_start(1)])[0].seq, 0)
        finally:
            own.stop()
            own.remove_data()

    def test_no_server_is_connection_failed_retried_up_to_max_attempts(self):
        s = Client("http://" + free_addr()).session("nobody")
        retries = []
        with self.assertRaises(LogbookError) as cm:
            s.append_retry(0, [ev.turn_start(1)], max_attempts=3, on_retry=lambda e: retries.append(e.code))
        self.assertEqual((cm.exception.code, cm.exception.status, cm.exception.appended), ("CONNECTION_FAILED", 0, 0))
        self.assertEqual(retries, ["CONNECTION_FAILED"] * 2)

    def test_openapi_names_every_route_the_client_calls(self):
        doc = lb.openapi()
        self.assertEqual(doc["openapi"], "3.1.0")
        for p in ("/v1/sessions/{id}/events/group", "/v1/sessions/{id}/open", "/v1/sessions/{id}/why", "/v1/sessions/{id}/lineage", "/v1/sessions/{id}/hold"):
            self.assertIn(p, doc["paths"])

    def test_create_takes_every_header_field(self):
        s = lb.create(id="py-sub", cwd="/work", origin="subagent", delegation_depth=2, agent_preset="coder", parent_session="py-lead")
        h = s.header
        self.assertEqual((h["cwd"], h["origin"], h["delegationDepth"], h["agentPreset"], h["parentSession"]),
                         ("/work", "subagent", 2, "coder", "py-lead"))
        with self.assertRaises(LogbookError) as cm:
            lb.create(origin="robot")
        self.assertEqual(cm.exception.code, "SEED_INVALID")

    def test_append_group_is_all_or_nothing(self):
        s = lb.create(id="py-group")
        with self.assertRaises(LogbookError) as cm:
            s.append_group([note(1), ev.turn_start(1), ev.user_text("u1", "one"), ev.user_text("u2", "two")])
        e = cm.exception
        self.assertEqual((e.code, e.index, e.line, e.appended, e.first_seq), ("SURFACE_OP_NOT_ALLOWED", 3, 4, 0, None))
        self.assertEqual(s.info()["length"], 0)
        with self.assertRaises(LogbookError) as cm:
            s.append_group([note(1)], expected_seq=1)
        self.assertEqual((cm.exception.code, cm.exception.appended), ("SEQ_CONFLICT", 0))
        evs = s.append_group([note(1), ev.turn_start(1), ev.user_text("u1", "one"), note(2)], expected_seq=0, flush=True)
        self.assertEqual([e.seq for e in evs], [0, 1, 2, 3])

    def test_messages_and_request_formats(self):
        """messages and request in every format, now and as of a seq; a
        provider request needs a request header as of that seq."""
        s = lb.create(id="py-formats")

        def missing(**kw):
            with self.assertRaises(LogbookError) as cm:
                s.request(**kw)
            self.assertEqual((cm.exception.code, cm.exception.status), ("REQUEST_HEADER_MISSING", 409))

        # An empty session: every messages format renders, a provider request has no header.
        for f in ("logbook", "openai", "anthropic"):
            self.assertEqual(s.messages(format=f), [])
        self.assertEqual(s.messages(format="markdown"), "")
        missing(format="openai")

        s.append(a_turn(1), flush=True)  # seqs 0–10, no request header
        openai = s.messages(format="openai")
        self.assertEqual([m["role"] for m in openai], ["user", "assistant", "tool", "assistant"])
        self.assertEqual(openai[0], {"role": "user", "content": "list the files"})
        self.assertEqual(openai, json.loads(s.text("messages", format="openai")))
        self.assertEqual([m["role"] for m in s.messages(format="anthropic")], ["user", "assistant", "user", "assistant"])
        self.assertEqual(s.messages(at=1, format="openai"), [openai[0]])
        self.assertEqual([i["type"] for i in s.messages(format="openai-responses")],
                         ["message", "function_call", "function_call_output", "message"])
        # At seq 3 the assistant message has announced c1 and no result has
        # come: the provider formats refuse, naming the call; logbook's
        # shows the messages.
        for f in ("openai", "anthropic", "openai-responses"):
            with self.assertRaises(LogbookError) as cm:
                s.messages(at=3, format=f)
            self.assertEqual((cm.exception.code, cm.exception.status, cm.exception.problem["meta"]["callIds"]),
                             ("TOOL_CALLS_PENDING", 409, '["c1"]'))
        self.assertEqual(len(s.messages(at=3)), 2)
        md = s.messages(format="markdown")
        self.assertIsInstance(md, str)
        self.assertTrue(md.startswith("## user\n\nlist the files"), md)
        self.assertEqual(s.messages(at=1, format="markdown"), "## user\n\nlist the files")

        req = s.request()
        self.assertEqual((req["header"], req["messages"]), (None, s.messages()))
        self.assertEqual(s.request(at=1), {"header": None, "context": None, "messages": s.messages(at=1)})
        missing(format="openai")
        missing(format="anthropic")

        # A header at seq 11: the provider bodies from there on, not before.
        header = ev.request_header(ev.Header(ev.Config(MODEL.provider, MODEL.name, max_tokens=1024)), "initial")
        s.append([header] + a_turn(2), flush=True)
        for f in ("openai", "anthropic", "openai-responses"):
            body = s.request(format=f)
            self.assertEqual(body["model"], "claude-sonnet-4")
            self.assertEqual(body, json.loads(s.text("request", format=f)))
            self.assertEqual(s.request(at=11, format=f)["model"], "claude-sonnet-4")
            missing(at=10, format=f)
            # Seq 15 announces c2, unanswered there.
            with self.assertRaises(LogbookError) as cm:
                s.request(at=15, format=f)
            self.assertEqual((cm.exception.code, cm.exception.problem["meta"]["callIds"]), ("TOOL_CALLS_PENDING", '["c2"]'))
        self.assertEqual(s.request()["header"], {"config": {"provider": "anthropic", "model": "claude-sonnet-4", "maxTokens": 1024}})

    def test_views_holds_and_delete(self):
        s = lb.create(id="py-views")
        s.append(a_rewrite(), flush=True)
        why = s.why(6)
        self.assertEqual((why["seq"], why["replace"], why["derivedFrom"][0]["seq"], why["derivedFrom"][0]["relation"]),
                         (6, {"startSeq": 5, "endSeq": 5}, 5, "shadowed"))
        with self.assertRaises(LogbookError) as cm:
            s.why(9)
        self.assertEqual(cm.exception.code, "INVALID_BOUNDARY")
        self.assertEqual(s.shadowed(), {"shadowed": [5], "replacedBy": {"5": 6}})
        self.assertEqual(s.shadowed(at=5), {"shadowed": [], "replacedBy": {}})
        tk = s.tokens()
        self.assertEqual(tk["total"], tk["headerTokens"] + tk["surfaceTokens"])
        self.assertEqual([n["seq"] for n in tk["nodes"]], s.surface())
        self.assertIn("[2 files]", s.text("messages", format="markdown"))
        with self.assertRaises(LogbookError) as cm:
            s.request(format="openai")
        self.assertEqual(cm.exception.code, "REQUEST_HEADER_MISSING")

        child = s.fork(at=6, as_id="py-views-child")
        lin = child.lineage()
        self.assertEqual(lin["ancestors"], [{"id": "py-views", "seq": 6}])
        self.assertEqual(lin["tree"], {"id": "py-views", "children": [{"id": "py-views-child", "seq": 6, "children": []}]})

        s.release()
        opened = s.open()
        self.assertEqual((opened["alreadyLive"], opened["nextSeq"], opened["repaired"]), (False, 10, []))
        self.assertTrue(s.open()["alreadyLive"])
        s.release()
        held = s.hold(reason="LEGAL-1")
        r = held["record"]
        self.assertEqual((held["changed"], r["op"], r["by"], r["reason"], r["events"]), (True, "hold", "api", "LEGAL-1", 10))
        self.assertEqual(s.hold(), {"changed": False})
        with self.assertRaises(LogbookError) as cm:
            s.delete()
        self.assertEqual(cm.exception.code, "SESSION_HELD")
        self.assertTrue(s.release_hold()["changed"])
        s.delete(reason="done")
        with self.assertRaises(LogbookError) as cm:
            s.info()
        self.assertEqual(cm.exception.code, "SESSION_NOT_FOUND")
