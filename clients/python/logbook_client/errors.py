"""LogbookError, the one error of every failed call, and retryable."""

from __future__ import annotations

from typing import Any

CONNECTION_FAILED = "CONNECTION_FAILED"
"""The code of a request the server never answered (no connection, or it
broke); a client-side code, retried like the server's unavailable ones."""

UNAUTHENTICATED = "UNAUTHENTICATED"
"""The code of a call without a credential, or with one the server does not
accept (unknown, revoked, expired): status 401."""

PERMISSION_DENIED = "PERMISSION_DENIED"
"""The code of a call the credential's role may not make, or naming a tenant
other than its own without being an operator's: status 403, whether the
session exists or not."""

TENANT_INVALID = "TENANT_INVALID"
"""The code of a tenant name outside [a-z0-9][a-z0-9-]{0,62}: status 400."""


class LogbookError(Exception):
    """A failed call: the server's problem (application/problem+json) or
    CONNECTION_FAILED (status 0). Test code, never the message.

    appended and first_seq say, for a failed append, how many of its events
    were appended and from which seq; expected and actual are the log
    lengths of a SEQ_CONFLICT; line and index the rejected NDJSON line
    (from 1) and input (from 0). problem is the whole document."""

    def __init__(self, problem: dict[str, Any]) -> None:
        self.problem = problem
        self.code: str = problem.get("code", "")
        self.status: int = problem.get("status", 0)
        self.detail: str = problem.get("detail", "")
        self.appended: int | None = problem.get("appended")
        self.first_seq: int | None = problem.get("firstSeq")
        self.expected: int | None = problem.get("expected")
        self.actual: int | None = problem.get("actual")
        self.line: int | None = problem.get("line")
        self.index: int | None = problem.get("index")
        self.seq: int | None = problem.get("seq")
        self.fenced: bool = problem.get("fenced") is True or self.code == "SESSION_FENCED"
        super().__init__(f"logbook: {self.code}: {self.detail}")


def retryable(err: BaseException) -> bool:
    """Whether a failed call may pass when repeated: the server or a plugin
    unavailable, an I/O error, a busy backend, the server's cap on live
    sessions reached (max_live_sessions), no answer, or a failed flush of a
    session that is not fenced."""
    if not isinstance(err, LogbookError):
        return False
    if err.code == "FLUSH_FAILED":
        return not err.fenced
    return err.code in ("IO_ERROR", "BACKEND_BUSY", "TOO_MANY_LIVE_SESSIONS", "PLUGIN_UNAVAILABLE", CONNECTION_FAILED)
