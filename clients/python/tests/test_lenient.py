"""The create option protocol against a real `logbook serve` (see serve.py)."""

import unittest

from logbook_client import Client, LogbookError

from .serve import Server, remove_bin


class CreateProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server()
        cls.lb = Client(cls.srv.url)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        cls.srv.remove_data()
        remove_bin()

    def test_lenient_create_and_refusals(self):
        s = self.lb.create(id="py-lenient", protocol="lenient")
        self.assertEqual(s.header.get("protocol"), "lenient")
        strict = self.lb.create(id="py-strict", protocol="strict")
        self.assertNotIn("protocol", strict.header)
        with self.assertRaises(LogbookError) as cm:
            self.lb.create(id="py-bad", protocol="loose")
        self.assertEqual(cm.exception.code, "USAGE")
        self.assertIn('"lenient"', cm.exception.problem.get("detail", ""))
        ids = [e["id"] for e in self.lb.list()["sessions"]]
        self.assertNotIn("py-bad", ids)


if __name__ == "__main__":
    unittest.main()
