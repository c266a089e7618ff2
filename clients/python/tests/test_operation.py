"""Operation ids (docs/format.md, "Operation ids") and labels through the
client against real `logbook serve` processes: the operation cases of the
fixture every door runs (internal/protocolcases/testdata/cases.json),
append_once and append_retry with an id, a replay after a SIGKILL of the
server, and labels at create."""

import unittest

from logbook_client import AppendOutcome, Client, LogbookError
from logbook_client import events as ev

from . import test_protocol as protocol
from .serve import Server, free_addr, remove_bin


def a_turn(n: int, text: str) -> list:
    """A whole turn with one prompt."""
    return [ev.turn_start(n), ev.user_text(f"u{n}", text), ev.turn_end(n, ev.completed())]


class OperationTest(unittest.TestCase):
    srv: Server
    lb: Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.srv = Server()
        cls.lb = Client(cls.srv.url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.srv.stop()
        cls.srv.remove_data()
        remove_bin()

    def log(self, s) -> list:
        return [e.envelope for e in s.events()]

    def test_cases(self) -> None:
        """Each step of each case: appended with its seqs, replayed with the
        original's seqs (the log unchanged), or refused with its code, Meta
        and index (the log unchanged)."""
        for i, c in enumerate(protocol.CASES["operations"]):
            with self.subTest(c["name"]):
                s = self.lb.create(id=f"operation-{i}")
                if c["prefix"]:
                    s.append(protocol.inputs(c["prefix"]))
                for j, st in enumerate(c["steps"]):
                    before = self.log(s)
                    op = st.get("operationId")
                    if op is None:
                        call = lambda: AppendOutcome(s.append(protocol.inputs(st["events"])), False)  # noqa: E731
                    else:
                        call = lambda: s.append_once(op, protocol.inputs(st["events"]))  # noqa: E731
                    if "code" in st:
                        with self.assertRaises(LogbookError, msg=f"step {j}") as cm:
                            call()
                        err = cm.exception
                        self.assertEqual(err.code, st["code"], f"step {j}: {err.detail}")
                        self.assertEqual(err.appended, 0, f"step {j}")
                        self.assertEqual(err.index or 0, st.get("index", 0), f"step {j}")
                        meta = dict(err.problem.get("meta") or {})
                        if err.first_seq is not None:
                            meta["firstSeq"] = str(err.first_seq)
                        want = st.get("meta", {})
                        self.assertEqual({k: meta.get(k) for k in want}, want, f"step {j}")
                        self.assertFalse(set(meta) - set(want) - set(protocol.APPEND_REPORT), f"step {j}: {meta}")
                        self.assertEqual(self.log(s), before, f"step {j}")
                        continue
                    out = call()
                    self.assertEqual([e.seq for e in out.events], st["seqs"], f"step {j}")
                    self.assertEqual(out.replayed, st.get("replayed", False), f"step {j}")
                    after = self.log(s)
                    self.assertEqual(after[:len(before)], before, f"step {j}")
                    self.assertEqual(len(after), len(before) + (0 if out.replayed else len(st["events"])), f"step {j}")

    def test_append_once(self) -> None:
        """A replay gives back the original envelopes byte for byte; a
        conflict names the original; operation_id on append and
        append_group is the same operation."""
        s = self.lb.create(id="once")
        first = s.append_once("turn-1", a_turn(1, "hi"))
        self.assertFalse(first.replayed)
        again = s.append(a_turn(1, "hi"), operation_id="turn-1")
        self.assertEqual([e.envelope for e in again], [e.envelope for e in first.events])
        grouped = s.append_group(a_turn(1, "hi"), operation_id="turn-1")
        self.assertEqual([e.envelope for e in grouped], [e.envelope for e in again])
        with self.assertRaises(LogbookError) as cm:
            s.append_once("turn-1", a_turn(1, "other"))
        self.assertEqual((cm.exception.code, cm.exception.status, cm.exception.first_seq), ("OPERATION_CONFLICT", 409, 0))
        self.assertEqual(cm.exception.problem["meta"], {"operationId": "turn-1", "count": "3"})
        for bad in ("", "x" * 129, "tab\there"):
            with self.assertRaises(LogbookError) as cm:
                s.append_once(bad, a_turn(2, "two"))
            self.assertEqual((cm.exception.code, cm.exception.status), ("OPERATION_ID_INVALID", 400))
        self.assertEqual(len(self.log(s)), 3)

    def test_append_retry(self) -> None:
        """append_retry with operation_id: a repeat after the log moved on is
        answered with the original events; another id at a stale length is
        the SEQ_CONFLICT."""
        s = self.lb.create(id="once-retry")
        evs = s.append_retry(0, a_turn(1, "hi"), flush=True, max_attempts=3, operation_id="t1")
        s.append(a_turn(2, "more"))
        again = s.append_retry(0, a_turn(1, "hi"), flush=True, max_attempts=3, operation_id="t1")
        self.assertEqual([e.envelope for e in again], [e.envelope for e in evs])
        with self.assertRaises(LogbookError) as cm:
            s.append_retry(3, a_turn(3, "late"), max_attempts=3, operation_id="t3")
        self.assertEqual((cm.exception.code, cm.exception.expected, cm.exception.actual), ("SEQ_CONFLICT", 3, 6))

    def test_labels(self) -> None:
        """Labels are in the stored header; labels the rules refuse are USAGE
        and create nothing."""
        labels = {"framework": "adk", "key": "app/user/session"}
        s = self.lb.create(id="labelled", labels=labels)
        self.assertEqual(s.header["labels"], labels)
        self.assertEqual(s.info()["header"]["labels"], labels)
        for bad in ({"Key": "v"}, {"k": "a\x01b"}, {f"k{i}": "v" for i in range(33)}):
            with self.assertRaises(LogbookError) as cm:
                self.lb.create(id="badly-labelled", labels=bad)
            self.assertEqual((cm.exception.code, cm.exception.status), ("USAGE", 400))
        with self.assertRaises(LogbookError) as cm:
            self.lb.session("badly-labelled").info()
        self.assertEqual(cm.exception.code, "SESSION_NOT_FOUND")

    def test_replay_after_sigkill(self) -> None:
        """An operation flushed before the answer is replayed by a server
        started again on the same data after a SIGKILL."""
        addr = free_addr()
        srv = Server(addr=addr)
        try:
            s = Client(srv.url).create(id="killed")
            first = s.append_once("turn-1", a_turn(1, "hi"), flush=True)
            srv.kill()
            srv = Server(addr=addr, data_dir=srv.data_dir)
            again = Client(srv.url).session("killed").append_once("turn-1", a_turn(1, "hi"))
            self.assertTrue(again.replayed)
            self.assertEqual([e.envelope for e in again.events], [e.envelope for e in first.events])
            with self.assertRaises(LogbookError) as cm:
                Client(srv.url).session("killed").append_once("turn-1", a_turn(1, "changed"))
            self.assertEqual(cm.exception.code, "OPERATION_CONFLICT")
        finally:
            srv.kill()
            srv.remove_data()


if __name__ == "__main__":
    unittest.main()
