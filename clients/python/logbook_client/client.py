"""Client and Session: the /v1 API of one `logbook serve` over urllib."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, NamedTuple

from ._json import encode_json, loads_lossless
from .errors import CONNECTION_FAILED, LogbookError, retryable
from .events import Event, Input

DEFAULT_TIMEOUT = 30.0
"""Seconds a request waits for the server, by default."""


class Client:
    """The /v1 API of one server at base_url (e.g. "http://127.0.0.1:7420"),
    with the bearer token when the server requires one (a token of `logbook
    token create`, a JWT, or the token of --token-file). Safe to share
    between threads.

    tenant is the tenant every call addresses, for an operator's credential
    (any other is refused with PERMISSION_DENIED unless it names its own
    tenant): sent as ?tenant= on /v1 and as the Logbook-Tenant header on
    any other path (Connect). None (the default) addresses the credential's
    own tenant, an operator's being "default". A name outside
    [a-z0-9][a-z0-9-]{0,62} is TENANT_INVALID."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 tenant: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.tenant = tenant

    def whoami(self) -> dict:
        """The credential the server sees: {"name", "tenant", "role"}; tenant
        is the one the call runs on: the credential's own, or for an
        operator the client's tenant option, else "default"."""
        return json.loads(self.call("GET", "/v1/whoami"))

    def create(self, id: str | None = None, cwd: str | None = None, origin: str | None = None,
               delegation_depth: int | None = None, agent_preset: str | None = None,
               parent_session: str | None = None, protocol: str | None = None,
               labels: dict[str, str] | None = None) -> "Session":
        """A new session (id default: a generated one) with the header fields
        given: cwd (absolute), origin ("subagent"), delegation_depth (≥ 0),
        agent_preset, parent_session (the id of the session that started
        it), protocol ("strict", the default: appends follow the
        agent-loop rules; "lenient": they skip them; anything else is a
        USAGE error and nothing is created) and labels (string keys and
        values kept in the header, set at create only: at most 32, keys
        1–64 bytes of [a-z0-9._/-] starting with a letter or digit, values
        up to 1024 bytes without control characters; anything else is
        USAGE and nothing is created)."""
        fields = (("id", id), ("cwd", cwd), ("origin", origin), ("delegationDepth", delegation_depth),
                  ("agentPreset", agent_preset), ("parentSession", parent_session), ("protocol", protocol),
                  ("labels", labels))
        body = {k: v for k, v in fields if v is not None}
        header = json.loads(self.call("POST", "/v1/sessions", json_body=body))
        return Session(self, header["id"], header)

    def session(self, id: str) -> "Session":
        """The handle of session id, without a request."""
        return Session(self, id)

    def list(self, limit: int | None = None, cursor: str | None = None, order: str | None = None) -> dict:
        """One page of the sessions: {"sessions": [...], "nextCursor": str | None};
        order "id" (the default), "recent" (newest first) or "activity" (most
        recently active first)."""
        return json.loads(self.call("GET", "/v1/sessions", query={"limit": limit, "cursor": cursor, "order": order}))

    def openapi(self) -> dict:
        """The OpenAPI document of the server's /v1 API."""
        return json.loads(self.call("GET", "/v1/openapi.json"))

    def open(self, method: str, path: str, query: dict | None = None, json_body: Any = None, ndjson: str | None = None,
             headers: dict | None = None, timeout: float | None = None):
        """Send one request and return the open successful response; a problem
        answer or no answer raises LogbookError."""
        q = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        h = dict(headers or {})
        if self.tenant is not None:
            if path.startswith("/v1/"):
                q["tenant"] = self.tenant
            else:
                h["Logbook-Tenant"] = self.tenant
        url = self.base_url + path + ("?" + urllib.parse.urlencode(q) if q else "")
        if self.token is not None:
            h["Authorization"] = "Bearer " + self.token
        data = None
        if json_body is not None:
            h["Content-Type"] = "application/json"
            data = encode_json(json_body).encode()
        elif ndjson is not None:
            h["Content-Type"] = "application/x-ndjson"
            data = ndjson.encode()
        elif method == "POST":
            # A POST says its media type even without a body (flush,
            # release): the server refuses one that does not
            # (UNSUPPORTED_MEDIA_TYPE), so that no web page's form or
            # no-cors fetch passes for a client.
            h["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=h)
        try:
            return urllib.request.urlopen(req, timeout=self.timeout if timeout is None else timeout)
        except urllib.error.HTTPError as e:
            with e:
                raise _problem_of(e.code, e.headers.get("Content-Type", ""), e.read()) from None
        except (urllib.error.URLError, OSError) as e:
            raise LogbookError({"code": CONNECTION_FAILED, "status": 0, "detail": f"{method} {path}: {e}"}) from e

    def call(self, method: str, path: str, **kw: Any) -> str:
        """open, reading the whole answer as text."""
        with self.open(method, path, **kw) as res:
            return _read(res, method, path)


def _read(res, method: str, path: str) -> str:
    """The whole body of an open response as text; a connection that breaks
    raises LogbookError (CONNECTION_FAILED)."""
    try:
        return res.read().decode()
    except OSError as e:
        raise LogbookError({"code": CONNECTION_FAILED, "status": 0, "detail": f"{method} {path}: {e}"}) from e


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _problem_of(status: int, ctype: str, body: bytes) -> LogbookError:
    if ctype.startswith("application/problem+json"):
        try:
            return LogbookError(json.loads(body))
        except ValueError:
            pass
    return LogbookError({"code": "UNEXPECTED_RESPONSE", "status": status, "detail": f"HTTP {status} without a problem document: {body[:200]!r}"})


def encode_input(i: Input) -> str:
    """One append input as its NDJSON line."""
    line: dict = {"type": i.type, "data": i.data}
    if i.surface_op is not None:
        line["surfaceOp"] = i.surface_op
    if i.source_event_seqs is not None:
        line["sourceEventSeqs"] = list(i.source_event_seqs)
    if i.ignorable:
        line["ignorable"] = True
    return encode_json(line)


def _events(text: str) -> list[Event]:
    return [Event.parse(line) for line in text.split("\n") if line]


REPLAY_HEADER = "Logbook-Replay"
"""The response header of an append under an operation id the session
already held with the same events ("true"): the body is the original
append's events."""


class AppendOutcome(NamedTuple):
    """What Session.append_once did: the operation's events (appended now,
    or by the original append when replayed) and whether it was a replay
    (the session already held the id with the same inputs: nothing was
    appended)."""

    events: list[Event]
    replayed: bool


class Session:
    """The handle of one session on the server; header is the stored header
    when the handle came from create or fork."""

    def __init__(self, client: Client, id: str, header: dict | None = None) -> None:
        self.client = client
        self.id = id
        self.header = header

    def _path(self, sub: str = "") -> str:
        # The ids "." and ".." are escaped too: the server cleans the dot
        # segments out of a path before it routes it.
        seg = self.id.replace(".", "%2E") if self.id in (".", "..") else urllib.parse.quote(self.id, safe="")
        return "/v1/sessions/" + seg + sub

    def info(self) -> dict:
        """The header, the log's length, whether it is live, and any torn tail."""
        return json.loads(self.client.call("GET", self._path()))

    def append(self, inputs: list[Input], expected_seq: int | None = None, flush: bool = False,
               operation_id: str | None = None) -> list[Event]:
        """Append inputs in order and return their stored events. With
        expected_seq the log must be that long, else SEQ_CONFLICT and nothing
        is appended. The first rejected input ends the request: the ones
        before it stay, and the LogbookError says how many (appended, from
        first_seq). With operation_id the inputs are appended once, as one
        atomic group (see append_once, which also says whether it was a
        replay)."""
        return self._append("/events", inputs, expected_seq, flush, operation_id).events

    def append_group(self, inputs: list[Input], expected_seq: int | None = None, flush: bool = False,
                     operation_id: str | None = None) -> list[Event]:
        """Append inputs as one atomic group (docs/compaction.md): all of them
        with consecutive seqs, or none, and the LogbookError of the rejected
        input (line, index, appended 0). With expected_seq the first input
        must get that seq. A group holds at most one surface or projection
        event. With operation_id the group is appended once (append_once)."""
        return self._append("/events/group", inputs, expected_seq, flush, operation_id).events

    def append_once(self, operation_id: str, inputs: list[Input], expected_seq: int | None = None,
                    flush: bool = False) -> AppendOutcome:
        """Append inputs as one atomic group under operation_id
        (docs/format.md, "Operation ids"), so that a retry of it, from any
        process and after any restart of the server, never appends twice:
        when the session already holds the id with the same inputs, nothing
        is appended and the original events come back with replayed True
        (expected_seq is not checked then). Other inputs under a held id
        raise OPERATION_CONFLICT, whose first_seq is the original's first
        seq and problem["meta"]["count"] its number of events. An id that is
        not 1–128 bytes of printable ASCII raises OPERATION_ID_INVALID."""
        return self._append("/events/group", inputs, expected_seq, flush, operation_id)

    def _append(self, sub: str, inputs: list[Input], expected_seq: int | None, flush: bool,
                operation_id: str | None = None) -> AppendOutcome:
        body = "".join(encode_input(i) + "\n" for i in inputs)
        path = self._path(sub)
        query = {"expectedSeq": expected_seq, "flush": flush or None, "operationId": operation_id}
        with self.client.open("POST", path, query=query, ndjson=body) as res:
            return AppendOutcome(_events(_read(res, "POST", path)), res.headers.get(REPLAY_HEADER) == "true")

    def append_retry(self, expected: int, inputs: list[Input], flush: bool = False, max_attempts: int = 0,
                     backoff: float = 0.01, max_backoff: float = 1.0,
                     on_retry: Callable[[LogbookError], None] | None = None,
                     operation_id: str | None = None) -> list[Event]:
        """Append inputs at log length expected, retrying what may pass
        (retryable) with backoff, up to max_attempts (0 = no bound). Every
        attempt carries the expected length, so nothing is appended twice:
        when an attempt whose answer was lost did append, the next meets
        SEQ_CONFLICT, and append_retry reads the events at expected back and
        compares them with its inputs (type, data by value, surfaceOp,
        sourceEventSeqs, ignorable). Its own count as appended (the rest are
        appended after them); another writer's raise the SEQ_CONFLICT. A
        failure's appended counts the inputs appended over all attempts.
        With operation_id every attempt carries it (append_once): the
        inputs are one atomic group, an attempt after one that did append
        them is answered with those events as a replay, and a SEQ_CONFLICT
        is raised as it is (other events are where these would go)."""
        r = _Retrier(max_attempts, backoff, max_backoff, on_retry)
        out: list[Event] = []

        def fail(err: LogbookError, last: int = 0) -> LogbookError:
            return LogbookError({**err.problem, "appended": len(out) + last, "firstSeq": expected})

        while len(out) < len(inputs) or not inputs:
            at = expected + len(out)
            rest = inputs[len(out):]
            try:
                if operation_id is not None:
                    return self.append_once(operation_id, rest, expected_seq=at, flush=flush).events
                return out + self.append(rest, expected_seq=at, flush=flush)
            except LogbookError as err:
                if operation_id is None and err.code == "SEQ_CONFLICT" and err.actual is not None and err.actual > at and rest:
                    try:
                        mine = self._own_events(r, at, err.actual, rest)
                    except LogbookError as rerr:
                        raise fail(rerr) from rerr
                    out.extend(mine)
                    if len(mine) < len(rest) and (not mine or at + len(mine) != err.actual):
                        raise fail(err) from err
                    if on_retry:
                        on_retry(err)
                    continue
                if not r.again(err):
                    raise fail(err, (err.appended or 0) if err.first_seq == at else 0) from err
        if flush:
            while True:
                try:
                    self.flush()
                    break
                except LogbookError as err:
                    if err.code == "SESSION_NOT_LIVE":
                        break  # read from storage: durable already
                    if not r.again(err):
                        raise fail(err) from err
        return out

    def _own_events(self, r: "_Retrier", at: int, end: int, inputs: list[Input]) -> list[Event]:
        end = min(end, at + len(inputs))
        while True:
            try:
                stored = self.events(at, end)
                break
            except LogbookError as err:
                if not r.again(err):
                    raise
        mine: list[Event] = []
        for ev in stored:
            if not same_event(ev, inputs[len(mine)]):
                break
            mine.append(ev)
        return mine

    def events(self, from_seq: int = 0, to: int | None = None) -> list[Event]:
        """The log [from_seq, to) (default: all of it)."""
        return _events(self.client.call("GET", self._path("/events"), query={"from": from_seq, "to": to}))

    def follow(self, from_seq: int = 0, to: int | None = None, read_timeout: float = 60.0,
               backoff: float = 0.05, max_backoff: float = 1.0,
               on_reconnect: Callable[[BaseException | None], None] | None = None) -> Iterator[Event]:
        """Yield the log's events from from_seq, then each event as it is
        appended, over Server-Sent Events. A dropped stream (the server
        restarted, the connection broke, nothing within read_timeout
        seconds, which the server's heartbeats prevent) is reconnected with
        backoff from the event after the last one yielded, with
        Last-Event-ID: no gap, no duplicate. It ends at to, or when the
        caller closes the generator; a problem no retry can cure
        (SESSION_NOT_FOUND) raises."""
        nxt = from_seq
        wait = backoff
        while to is None or nxt < to:
            headers = {"Accept": "text/event-stream"}
            if nxt > 0:
                headers["Last-Event-ID"] = str(nxt - 1)
            try:
                with self.client.open("GET", self._path("/events"), query={"from": nxt, "to": to}, headers=headers, timeout=read_timeout) as res:
                    for data in _server_events(res):
                        ev = Event.parse(data)
                        if ev.seq < nxt:
                            continue
                        wait = backoff
                        nxt = ev.seq + 1
                        yield ev
                if to is not None and nxt >= to:
                    return
                if on_reconnect:
                    on_reconnect(None)
            except LogbookError as err:
                if not retryable(err):
                    raise
                if on_reconnect:
                    on_reconnect(err)
            except (OSError, http.client.HTTPException) as err:
                if on_reconnect:
                    on_reconnect(err)
            time.sleep(wait)
            wait = min(2 * wait, max_backoff)

    def messages(self, at: int | None = None, format: str | None = None) -> list | str:
        """The derived messages, as right after event at (default: now), in
        format (GET …/messages?format=; docs/providers.md): "logbook" (the
        default) as derived, "openai" or "anthropic" the provider's messages
        array, "openai-responses" the Responses API's input items (parsed
        JSON), "markdown" the text for a person (a str). Every session
        renders, with or without a request header; a provider format raises
        TOOL_CALLS_PENDING while a step's calls have no result."""
        body = self.text("messages", at, format=format)
        return body if format == "markdown" else json.loads(body)

    def transcript(self) -> list:
        """The events that appended a message, as recorded: {seq, type, message, onSurface}."""
        return json.loads(self.text("transcript"))

    def surface(self, at: int | None = None) -> list[int]:
        """The seqs of the surface nodes, in surface order."""
        return json.loads(self.text("surface", at))

    def request_header(self, at: int | None = None) -> Any:
        """The folded request header, None when the log has none."""
        return json.loads(self.text("header", at))

    def request(self, at: int | None = None, format: str | None = None) -> dict:
        """The request a model would be sent right after event at (default:
        now), in format (GET …/request?format=): {header, context, messages}
        ("logbook", the default), or the provider's body ("openai",
        "anthropic", "openai-responses"). A provider format raises
        REQUEST_HEADER_MISSING when the log has no request/header up to that
        event, and TOOL_CALLS_PENDING while a step's calls have no result."""
        return json.loads(self.text("request", at, format=format))

    def why(self, seq: int) -> dict:
        """The provenance tree of event seq, as `logbook why ID SEQ --json` prints it."""
        return json.loads(self.text("why", seq=seq))

    def shadowed(self, at: int | None = None) -> dict:
        """The nodes replacements took off the surface, as after event at
        (default: now): {"shadowed": [seq…], "replacedBy": {"<seq>": seq}}."""
        return json.loads(self.text("shadowed", at))

    def tokens(self, at: int | None = None) -> dict:
        """The token estimate of the next request, as after event at (default:
        now): {total, surfaceTokens, headerTokens, baseline, perTurn, nodes, method}."""
        return json.loads(self.text("tokens", at))

    def lineage(self) -> dict:
        """The fork family from the stored headers: {id, ancestors, children, tree}."""
        return json.loads(self.text("lineage"))

    def inspect(self) -> dict:
        """The open turn and the repair a resume would append; never writes."""
        return json.loads(self.text("inspect"))

    def text(self, view: str, at: int | None = None, format: str | None = None, seq: int | None = None) -> str:
        """A view's document ("messages", "transcript", "surface", "header",
        "request", "inspect", "why", "shadowed", "tokens", "lineage") exactly
        as the server sent it; format for messages and request, seq for why."""
        query = {"at": at, "format": format, "seq": seq}
        return self.client.call("GET", self._path("/" + view), query=query).removesuffix("\n")

    def open(self) -> dict:
        """Resume the stored session for write (closing an interrupted turn,
        cutting a torn tail) and keep it live, or find it live: {id, header,
        nextSeq, alreadyLive, repaired: [envelope…], torn?}. An append
        resumes a session by itself; open is for reading the repair before
        the first write."""
        return json.loads(self.client.call("POST", self._path("/open")))

    def fork(self, at: int | None = None, as_id: str | None = None) -> "Session":
        """A live child keeping the events up to at (default all), id as_id (default generated)."""
        body = {k: v for k, v in (("at", at), ("as", as_id)) if v is not None}
        header = json.loads(self.client.call("POST", self._path("/fork"), json_body=body))
        return Session(self.client, header["id"], header)

    def flush(self) -> dict:
        """Make every appended event durable on every backend: {participated, backends: [{name, durableSeq}]}."""
        return json.loads(self.client.call("POST", self._path("/flush")))

    def compact(self, start_seq: int | None = None, end_seq: int | None = None, source_command_id: str | None = None) -> list[Event]:
        """Run a manual compaction; the events it appended."""
        body = {k: v for k, v in (("startSeq", start_seq), ("endSeq", end_seq), ("sourceCommandId", source_command_id)) if v is not None}
        return _events(self.client.call("POST", self._path("/compact"), json_body=body))

    def release(self) -> None:
        """Flush the session and let the server drop it."""
        self.client.call("POST", self._path("/release"))

    def delete(self, reason: str | None = None) -> None:
        """Delete the stored session from every backend, audited with by "api"
        and the reason: a live session is ALREADY_OWNED (release it first), a
        held one SESSION_HELD."""
        self.client.call("DELETE", self._path(), query={"reason": reason})

    def hold(self, reason: str | None = None) -> dict:
        """Put a legal hold on the stored session: delete and retention refuse
        it until release_hold. {"changed": bool, "record": {...}} (record
        only when it changed)."""
        return self._set_hold("/hold", reason)

    def release_hold(self, reason: str | None = None) -> dict:
        """Lift the legal hold, answered as hold is."""
        return self._set_hold("/release-hold", reason)

    def _set_hold(self, sub: str, reason: str | None) -> dict:
        body = {} if reason is None else {"reason": reason}
        return json.loads(self.client.call("POST", self._path(sub), json_body=body))


def _server_events(res) -> Iterator[str]:
    """The data of each Server-Sent Event of an open text/event-stream
    response (comments are heartbeats); ends with the stream."""
    data: list[str] = []
    for raw in res:
        line = raw.decode().rstrip("\r\n") if raw.endswith(b"\n") else None
        if line is None:
            return  # a cut last line: the stream broke
        if line == "":
            if data:
                yield "\n".join(data)
            data = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value.removeprefix(" "))


class _Retrier:
    """The backoff and attempt count of one append_retry."""

    def __init__(self, max_attempts: int, backoff: float, max_backoff: float, on_retry) -> None:
        self.max_attempts = max_attempts
        self.wait = backoff
        self.max_backoff = max_backoff
        self.on_retry = on_retry
        self.attempts = 0

    def again(self, err: LogbookError) -> bool:
        """Sleep out the backoff and return True when err may pass on a retry and attempts remain."""
        self.attempts += 1
        if not retryable(err) or (self.max_attempts and self.attempts >= self.max_attempts):
            return False
        if self.on_retry:
            self.on_retry(err)
        time.sleep(self.wait)
        self.wait = min(2 * self.wait, self.max_backoff)
        return True


def same_event(ev: Event, i: Input) -> bool:
    """Whether a stored event is the one input i would append: the same
    type, surfaceOp, sourceEventSeqs and ignorable, and data equal by value
    (numbers exactly)."""
    if ev.type != i.type or ev.ignorable != i.ignorable:
        return False
    if not _same_surface_op(ev.surface_op, i.surface_op):
        return False
    if (ev.source_event_seqs is None) != (i.source_event_seqs is None) or list(ev.source_event_seqs or []) != list(i.source_event_seqs or []):
        return False
    mine = encode_json(i.data)
    return ev.data_text == mine or _exact(loads_lossless(ev.data_text)) == _exact(loads_lossless(mine))


def _exact(v: Any) -> Any:
    """v with every number as a Decimal, so 1 and 1.0 compare equal and
    booleans stay apart from numbers."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, Decimal)):
        return ("num", Decimal(v).normalize())
    if isinstance(v, list):
        return [_exact(el) for el in v]
    return {k: _exact(el) for k, el in v.items()}


def _same_surface_op(a: Any, b: Any) -> bool:
    if a is None or b is None or a == "append" or b == "append":
        return a == b
    return a.get("startSeq") == b.get("startSeq") and a.get("endSeq") == b.get("endSeq")
