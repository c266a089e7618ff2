"""The agent-loop rules (docs/format.md, "The agent-loop protocol") through
the client against one real `logbook serve`: the fixture every door runs,
internal/protocolcases/testdata/cases.json. Each rule's event raises a
LogbookError with status 409, its code and Meta, and changes nothing, alone
and as an append_group member; the legal patterns are accepted; a session
created lenient accepts the refused events."""

import json
import os
import unittest

from logbook_client import Client, LogbookError
from logbook_client.events import Input

from .serve import REPO_ROOT, Server, remove_bin

with open(os.path.join(REPO_ROOT, "internal", "protocolcases", "testdata", "cases.json"), encoding="utf-8") as f:
    CASES = json.load(f)

# The Meta keys an append's problem may carry besides the rule's.
APPEND_REPORT = ("appended", "firstSeq")


def inputs(lines: list) -> list:
    """The fixture's input lines as Inputs."""
    return [Input(l["type"], l["data"], surface_op=l.get("surfaceOp"), source_event_seqs=l.get("sourceEventSeqs")) for l in lines]


class ProtocolTest(unittest.TestCase):
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

    def create(self, id: str, lenient: bool):
        s = self.lb.create(id=id, protocol="lenient" if lenient else None)
        if lenient:
            self.assertEqual(s.header.get("protocol"), "lenient")
        return s

    def log(self, s) -> list:
        return [e.envelope for e in s.events()]

    def append_all(self, s, lines: list, together: bool) -> list:
        """Append lines to a new session, in one request when together is
        set and one each otherwise; the seqs are 0, 1, …."""
        batches = [lines] if together else [[l] for l in lines]
        nxt = 0
        for b in batches:
            if not b:
                continue
            evs = s.append(inputs(b))
            self.assertEqual([e.seq for e in evs], list(range(nxt, nxt + len(b))))
            nxt += len(b)
        log = self.log(s)
        self.assertEqual(len(log), len(lines))
        return log

    def refused(self, call, code: str, meta: dict, index: int) -> None:
        """call must raise a rule's refusal: status 409, the case's Meta (and
        no other key but the append's report), nothing appended."""
        with self.assertRaises(LogbookError) as cm:
            call()
        err = cm.exception
        self.assertEqual(err.code, code, err.detail)
        self.assertEqual(err.status, 409)
        self.assertEqual(err.appended, 0)
        self.assertEqual(err.index, index)
        got = {k: v for k, v in (err.problem.get("meta") or {}).items() if k not in APPEND_REPORT}
        self.assertEqual(got, meta)

    def unchanged(self, s, before: list, nxt: dict) -> None:
        """The log is the one before the refusal, and nxt gets the seq after it."""
        self.assertEqual(self.log(s), before)
        self.assertEqual([e.seq for e in s.append(inputs([nxt]))], [len(before)])

    def test_refused(self) -> None:
        for i, c in enumerate(CASES["refused"]):
            with self.subTest(c["name"]):
                s = self.create(f"refused-{i}", False)
                before = self.append_all(s, c["prefix"], True)
                self.refused(lambda: s.append(inputs([c["event"]])), c["code"], c["meta"], 0)
                self.unchanged(s, before, c["next"])

    def test_legal(self) -> None:
        for i, l in enumerate(CASES["legal"]):
            with self.subTest(l["name"]):
                self.append_all(self.create(f"legal-{i}", False), l["events"], False)

    def test_group(self) -> None:
        for i, g in enumerate(CASES["groups"]):
            with self.subTest(g["name"]):
                s = self.create(f"group-{i}", False)
                before = self.append_all(s, g["prefix"], True)
                self.refused(lambda: s.append_group(inputs(g["group"])), g["code"], g["meta"], g["index"])
                self.unchanged(s, before, g["next"])

    def test_lenient(self) -> None:
        for i, c in enumerate(CASES["refused"]):
            with self.subTest(c["name"]):
                self.append_all(self.create(f"lenient-{i}", True), c["prefix"] + [c["event"]], True)


if __name__ == "__main__":
    unittest.main()
