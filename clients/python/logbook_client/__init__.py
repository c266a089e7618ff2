"""Client of logbook's /v1 JSON API, standard library only.

Client talks to one `logbook serve`; Session is one session's handle:
create, append (expected_seq, append_retry that never duplicates,
append_once under an operation id), flush,
messages and the other views, fork, and follow, a generator over
Server-Sent Events. The events module holds the builders of the core
event vocabulary. Every failure is a LogbookError carrying the server's
code and details. Documents stay lossless: Event.envelope and
Event.data_text are the server's bytes; RawJSON sends text verbatim."""

from . import events
from ._json import RawJSON, encode_json, loads_lossless, member_text
from .client import REPLAY_HEADER, AppendOutcome, Client, Session, encode_input, same_event
from .errors import CONNECTION_FAILED, PERMISSION_DENIED, TENANT_INVALID, UNAUTHENTICATED, LogbookError, retryable
from .events import Event, Input

__all__ = [
    "CONNECTION_FAILED",
    "PERMISSION_DENIED",
    "TENANT_INVALID",
    "UNAUTHENTICATED",
    "REPLAY_HEADER",
    "AppendOutcome",
    "Client",
    "Event",
    "Input",
    "LogbookError",
    "RawJSON",
    "Session",
    "encode_input",
    "encode_json",
    "events",
    "loads_lossless",
    "member_text",
    "retryable",
    "same_event",
]
