"""A real `logbook serve` for the tests: the binary from LOGBOOK_TEST_BIN,
or built once from this repository into a temporary directory; each
server gets a data directory the tests remove."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LISTEN_PREFIX = "logbook serve: listening on "

_built: dict = {}


def logbook_bin() -> str:
    """The logbook binary, built on first use when LOGBOOK_TEST_BIN is unset."""
    if "bin" not in _built:
        env = os.environ.get("LOGBOOK_TEST_BIN")
        if env:
            _built.update(bin=env, dir=None)
        else:
            d = tempfile.mkdtemp(prefix="logbook-py-bin-")
            b = os.path.join(d, "logbook")
            subprocess.run(["go", "build", "-o", b, "./cmd/logbook"], cwd=REPO_ROOT, check=True)
            _built.update(bin=b, dir=d)
    return _built["bin"]


def remove_bin() -> None:
    """Remove a binary logbook_bin built."""
    if _built.get("dir"):
        shutil.rmtree(_built["dir"], ignore_errors=True)
    _built.clear()


def free_addr() -> str:
    """A loopback address whose port is free now, for a server that must come back on it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


class Server:
    """One running `logbook serve` on addr (default a free port) over
    data_dir (default a new temporary directory), with further args."""

    def __init__(self, addr: str = "127.0.0.1:0", data_dir: str | None = None, args: list[str] | None = None) -> None:
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="logbook-py-data-")
        self.proc = subprocess.Popen([logbook_bin(), "serve", "--addr", addr, "--data", self.data_dir, *(args or [])],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log: list[str] = []
        found = threading.Event()

        def read() -> None:
            for line in self.proc.stderr:
                self.log.append(line)
                if line.startswith(LISTEN_PREFIX) and not found.is_set():
                    self.addr = line[len(LISTEN_PREFIX):].strip()
                    found.set()
            found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not found.wait(20) or self.proc.poll() is not None:
            self.kill()
            raise RuntimeError("logbook serve did not listen:\n" + "".join(self.log))
        self.url = "http://" + self.addr

    def stop(self) -> None:
        """SIGTERM (serve flushes and releases every session) and wait until it is gone."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL and wait until it is gone."""
        self._end(signal.SIGKILL)

    def _end(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(20)
        self._reader.join(5)
        self.proc.stderr.close()

    def remove_data(self) -> None:
        """Remove the data directory."""
        shutil.rmtree(self.data_dir, ignore_errors=True)
