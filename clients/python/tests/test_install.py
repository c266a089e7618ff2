"""The client installs the way the README says, with no package index:
`python3 -m venv X && X/bin/pip install --no-build-isolation
<repo>/clients/python`, then the venv's python imports the installed copy
and appends to a real `logbook serve` (see serve.py). Also: the sdist
build_backend.py writes holds what a wheel is built from, and the wheel
built from it is byte for byte the one built from this directory."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

from .serve import Server, remove_bin

PKG_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# Run by the venv's python in a directory without the sources: argv[1] is
# the server's URL. Prints where logbook_client came from, its installed
# metadata, and the events appended and read back.
CHECK = """
import importlib.metadata, json, sys
import logbook_client
from logbook_client import Client, events as ev

s = Client(sys.argv[1]).create(id="installed")
model = ev.Model("anthropic", "claude-sonnet-4")
appended = s.append([ev.turn_start(1), ev.user_text("u1", "hi"), ev.step_start(1, 1),
                     ev.assistant_text(1, 1, "a1", model, "hello"), ev.step_end(1, 1),
                     ev.turn_end(1, ev.completed())], expected_seq=0, flush=True)
md = importlib.metadata.metadata("logbook-client")
print(json.dumps({
    "file": logbook_client.__file__,
    "version": md["Version"],
    "license": md["License-Expression"],
    "appended": [[e.seq, e.type] for e in appended],
    "read": [[e.seq, e.type] for e in s.events()],
}))
"""

TURN = [[0, "turn/start"], [1, "user/message"], [2, "step/start"], [3, "assistant/message"], [4, "step/end"], [5, "turn/end"]]


def _env(**extra: str) -> dict:
    """The environment without PYTHONPATH (nothing may lead a venv's python to the sources) plus extra."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def _run(args: list[str], cwd: str, **extra: str) -> str:
    p = subprocess.run(args, cwd=cwd, env=_env(**extra), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} (in {cwd}) exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.srv = Server()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.srv.stop()
        cls.srv.remove_data()
        remove_bin()

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="logbook-py-install-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_pip_install_no_build_isolation_in_a_fresh_venv_without_an_index(self) -> None:
        venv = os.path.join(self.tmp, "X")
        _run([sys.executable, "-m", "venv", venv], self.tmp)
        # PIP_NO_INDEX: pip may reach no package index, as on a machine without one.
        _run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", PKG_DIR], self.tmp,
             PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        with open(os.path.join(self.tmp, "check.py"), "w") as f:
            f.write(CHECK)
        got = json.loads(_run([os.path.join(venv, "bin", "python"), "check.py", self.srv.url], self.tmp))
        site = _run([os.path.join(venv, "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], self.tmp).strip()
        self.assertEqual(os.path.realpath(got["file"]), os.path.realpath(os.path.join(site, "logbook_client", "__init__.py")),
                         "logbook_client is imported from the venv's site-packages, not from the sources")
        self.assertEqual(got["version"], "0.1.0")
        self.assertEqual(got["license"], "Apache-2.0")
        self.assertEqual(got["appended"], TURN)
        self.assertEqual(got["read"], TURN, "the server holds the appended turn")

    def test_sdist_builds_the_same_wheel(self) -> None:
        out = os.path.join(self.tmp, "out")
        os.mkdir(out)
        build = "import build_backend, sys; print(getattr(build_backend, sys.argv[1])(sys.argv[2]))"
        sdist = _run([sys.executable, "-c", build, "build_sdist", out], PKG_DIR).strip()
        wheel = _run([sys.executable, "-c", build, "build_wheel", out], PKG_DIR).strip()
        self.assertEqual((sdist, wheel), ("logbook_client-0.1.0.tar.gz", "logbook_client-0.1.0-py3-none-any.whl"))
        with tarfile.open(os.path.join(out, sdist)) as t:
            names = sorted(t.getnames())
            for m in t.getmembers():
                os.makedirs(os.path.join(self.tmp, os.path.dirname(m.name)), exist_ok=True)
                with open(os.path.join(self.tmp, m.name), "wb") as f:
                    f.write(t.extractfile(m).read())
        package = sorted(f for f in os.listdir(os.path.join(PKG_DIR, "logbook_client")) if f.endswith(".py"))
        self.assertEqual(names, sorted(["logbook_client-0.1.0/" + f for f in
                                        ["PKG-INFO", "README.md", "build_backend.py", "pyproject.toml",
                                         *("logbook_client/" + p for p in package)]]))
        again = os.path.join(self.tmp, "again")
        os.mkdir(again)
        _run([sys.executable, "-c", build, "build_wheel", again], os.path.join(self.tmp, "logbook_client-0.1.0"))
        with open(os.path.join(out, wheel), "rb") as a, open(os.path.join(again, wheel), "rb") as b:
            self.assertEqual(a.read(), b.read(), "the wheel built from the sdist is the one built from clients/python")


if __name__ == "__main__":
    unittest.main()
