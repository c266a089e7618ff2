"""The client's tenant option and the credential codes against a real
`logbook serve` with tokens of `logbook token create` in two tenants."""

import json
import shutil
import subprocess
import tempfile
import unittest

from logbook_client import PERMISSION_DENIED, TENANT_INVALID, UNAUTHENTICATED, Client, LogbookError, retryable
from logbook_client import events as ev

from .serve import Server, logbook_bin


class TenantTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        data = tempfile.mkdtemp(prefix="logbook-py-data-")
        cls.tokens = {}
        try:
            for name, tenant, role in (("op", "*", "operator"), ("a-read", "a", "read"), ("a-write", "a", "write")):
                out = subprocess.run([logbook_bin(), "--data", data, "token", "create", "--tenant", tenant, "--role", role,
                                      "--name", name], check=True, capture_output=True, text=True).stdout
                cls.tokens[name] = out.strip().splitlines()[-1]
            cls.srv = Server(data_dir=data)
        except BaseException:
            shutil.rmtree(data, ignore_errors=True)
            raise
        cls.client("op", "b").create(id="same")
        cls.client("op", "b").create(id="b-only")
        cls.client("a-write").create(id="same")

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        cls.srv.remove_data()

    @classmethod
    def client(cls, name, tenant=None):
        return Client(cls.srv.url, token=cls.tokens[name], tenant=tenant)

    def ids(self, c):
        return sorted(s["id"] for s in c.list()["sessions"])

    def failure(self, f):
        with self.assertRaises(LogbookError) as cm:
            f()
        return cm.exception

    def test_whoami_names_the_credential(self):
        self.assertEqual(self.client("a-read").whoami(), {"name": "a-read", "tenant": "a", "role": "read"})
        self.assertEqual(self.client("op").whoami(), {"name": "op", "tenant": "default", "role": "operator"})
        self.assertEqual(self.client("op", "b").whoami(), {"name": "op", "tenant": "b", "role": "operator"})

    def test_an_operators_tenant_option_addresses_that_tenant_on_v1(self):
        self.assertEqual(self.ids(self.client("op", "b")), ["b-only", "same"])
        self.assertEqual(self.ids(self.client("op", "a")), ["same"])
        self.assertEqual(self.ids(self.client("a-read")), ["same"])
        self.assertEqual(self.ids(self.client("op")), [], "an operator's own tenant is default")
        err = self.failure(lambda: self.client("a-read").session("b-only").info())
        self.assertEqual((err.code, err.status), ("SESSION_NOT_FOUND", 404))

    def test_the_same_id_in_two_tenants_is_two_sessions(self):
        self.client("op", "a").create(id="twin")
        self.client("op", "b").create(id="twin")
        self.client("a-write").session("twin").append([ev.turn_start(1)])
        self.assertEqual(self.client("op", "a").session("twin").info()["length"], 1)
        self.assertEqual(self.client("op", "b").session("twin").info()["length"], 0)

    def test_the_tenant_option_travels_as_logbook_tenant_on_connect(self):
        body = json.loads(self.client("op", "b").call("POST", "/logbook.v1.Sessions/List", json_body={}))
        self.assertIn("b-only", [s["id"] for s in body.get("sessions", [])])
        self.assertNotIn("a-only", [s["id"] for s in body.get("sessions", [])])

    def test_a_read_credential_writing_is_permission_denied(self):
        err = self.failure(lambda: self.client("a-read").create(id="nope"))
        self.assertEqual((err.code, err.status), (PERMISSION_DENIED, 403))
        self.assertFalse(retryable(err))
        self.assertNotIn("nope", self.ids(self.client("op", "a")), "nothing was created")

    def test_a_non_operator_naming_another_tenant_is_permission_denied(self):
        err = self.failure(lambda: self.client("a-read", "b").list())
        self.assertEqual((err.code, err.status), (PERMISSION_DENIED, 403))

    def test_a_tenant_name_outside_the_rule_is_tenant_invalid(self):
        err = self.failure(lambda: self.client("op", "Not_Valid").list())
        self.assertEqual((err.code, err.status), (TENANT_INVALID, 400))
        self.assertFalse(retryable(err))

    def test_an_unknown_token_is_unauthenticated(self):
        err = self.failure(lambda: Client(self.srv.url, token="lb_not-a-token").list())
        self.assertEqual((err.code, err.status), (UNAUTHENTICATED, 401))


if __name__ == "__main__":
    unittest.main()
