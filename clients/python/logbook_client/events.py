"""The event vocabulary a harness writes (docs/format.md in the logbook
repository): a builder for every core event, mirroring the Go package
events. Builders return an Input whose data is a plain dict, members in
the order logbook stores them, so the data that comes back from the log is
the data that went in, byte for byte. A builder never raises: what it
cannot tell is wrong without the session is sent as given, and the append
rejects it with the rule it breaks. Content blocks and turn end reasons are
dicts too."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Union

from ._json import member_text

SurfaceOp = Union[str, dict]
"""How a surface event changes the model's view: "append", or
{"op": "replace", "startSeq": S, "endSeq": E} (see replacing)."""

TURN_START = "turn/start"
TURN_END = "turn/end"
STEP_START = "step/start"
STEP_END = "step/end"
SYSTEM_MESSAGE = "system/message"
DEVELOPER_MESSAGE = "developer/message"
USER_MESSAGE = "user/message"
ASSISTANT_MESSAGE = "assistant/message"
ASSISTANT_ATTEMPT = "assistant/attempt"
TOOL_CALL = "tool/call"
TOOL_RESULT = "tool/result"
TODO_WRITE = "todo/write"
REQUEST_HEADER = "request/header"
REQUEST_CONTEXT = "request/context"


@dataclass
class Input:
    """One event to append: its type, its data (any JSON value; RawJSON for
    text sent verbatim) and the optional envelope members. The server
    assigns seq and time. ignorable is only for types this build does not
    know (plugin records)."""

    type: str
    data: Any
    surface_op: SurfaceOp | None = None
    source_event_seqs: list[int] | None = None
    ignorable: bool = False


# ---- content blocks ----


def text(s: str) -> dict:
    """A text block."""
    return {"type": "text", "text": s}


def reasoning(s: str, signature: str = "") -> dict:
    """An assistant's reasoning block; signature "" writes none."""
    b = {"type": "reasoning", "text": s}
    if signature:
        b["signature"] = signature
    return b


def tool_call_block(id: str, name: str, arguments: str) -> dict:
    """An assistant's call of tool name with the raw argument text."""
    return {"type": "tool-call", "id": id, "name": name, "arguments": arguments}


def image(media_type: str, data: bytes) -> dict:
    """An image block; data is the image's bytes, written in base64."""
    return {"type": "image", "mediaType": media_type, "data": base64.b64encode(data).decode("ascii")}


def tool_addition(name: str) -> dict:
    """A developer message's block: tool name became available."""
    return {"type": "tool-addition", "toolName": name}


def tool_removal(name: str) -> dict:
    """A developer message's block: tool name went away."""
    return {"type": "tool-removal", "toolName": name}


def plugin_block(name: str, members: dict | None = None) -> dict:
    """The opaque block "plugin:<name>" with members after type."""
    return {"type": "plugin:" + name, **(members or {})}


# ---- turn end reasons ----


def completed() -> dict:
    """The reason of a turn the agent loop finished normally."""
    return {"kind": "completed"}


def aborted_by_user() -> dict:
    """The reason of a turn the user stopped."""
    return {"kind": "aborted", "cause": {"kind": "user"}}


def aborted_by_parent() -> dict:
    """The reason of a turn its parent stopped."""
    return {"kind": "aborted", "cause": {"kind": "parent"}}


def aborted_disposed() -> dict:
    """The reason of a turn stopped because its agent was disposed."""
    return {"kind": "aborted", "cause": {"kind": "disposed"}}


def aborted_by_hook(why: str) -> dict:
    """The reason of a turn a hook stopped, saying why."""
    return {"kind": "aborted", "cause": {"kind": "hook", "reason": why}}


def blocked() -> dict:
    """The reason of a turn a hook or policy blocked."""
    return {"kind": "blocked"}


def failed(code: str, message: str) -> dict:
    """The reason of a failed turn; a failure not from the model has code "UNKNOWN"."""
    return {"kind": "error", "error": {"message": message, "code": code}}


def max_tokens() -> dict:
    """The reason of a turn whose step hit the output token cap."""
    return {"kind": "max-tokens"}


def interrupted() -> dict:
    """The reason crash repair writes; a harness does not write it."""
    return {"kind": "interrupted"}


def forked() -> dict:
    """The reason a fork writes when it closes a turn it cut."""
    return {"kind": "forked"}


def plugin_reason(name: str, members: dict | None = None) -> dict:
    """The reason "plugin:<name>" of a plugin, with members after kind."""
    return {"kind": "plugin:" + name, **(members or {})}


# ---- turns and steps ----


def turn_start(turn: int) -> Input:
    """turn/start: turn begins."""
    return Input(TURN_START, {"turn": turn})


def turn_end(turn: int, reason: dict) -> Input:
    """turn/end: turn is over, for reason."""
    return Input(TURN_END, {"turn": turn, "reason": reason})


def step_start(turn: int, step: int) -> Input:
    """step/start: step of turn begins."""
    return Input(STEP_START, {"turn": turn, "step": step})


def step_end(turn: int, step: int) -> Input:
    """step/end: step of turn is over."""
    return Input(STEP_END, {"turn": turn, "step": step})


# ---- messages ----


@dataclass
class Model:
    """The model a reply came from."""

    provider: str
    name: str


@dataclass
class Usage:
    """Token usage of a model call; cache_read and cache_write are written only when not 0."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0

    def to_json(self) -> dict:
        """The stored form."""
        u = {"input": self.input, "output": self.output}
        if self.cache_read:
            u["cacheRead"] = self.cache_read
        if self.cache_write:
            u["cacheWrite"] = self.cache_write
        return u


def _message(id: str, role: str, content: list, source: dict) -> dict:
    return {"id": id, "role": role, "content": list(content), "source": source}


def _surface(type: str, data: dict) -> Input:
    return Input(type, data, surface_op="append")


def system(turn: int, step: int, id: str, prompt: str) -> Input:
    """system/message: the system prompt as message id with one text block."""
    return _surface(SYSTEM_MESSAGE, {"turn": turn, "step": step, "message": _message(id, "system", [text(prompt)], {"kind": "system-prompt"})})


def developer(turn: int, step: int, id: str, header_seq: int, *content: dict) -> Input:
    """developer/message: tools became available (tool_addition blocks,
    declared by the request/header at header_seq) or went away; header_seq
    is written only when a block adds a tool."""
    data = {"turn": turn, "step": step, "message": _message(id, "developer", list(content), {"kind": "tool-change"})}
    if any(b.get("type") == "tool-addition" for b in content):
        data["headerSeq"] = header_seq
    return _surface(DEVELOPER_MESSAGE, data)


def user(id: str, kind: str, *content: dict) -> Input:
    """user/message: message id with content; kind is the source kind,
    "prompt" for what the user asked or e.g. "context"."""
    return _surface(USER_MESSAGE, _message(id, "user", list(content), {"kind": kind}))


def user_text(id: str, prompt: str) -> Input:
    """user/message: the user's prompt text as message id."""
    return user(id, "prompt", text(prompt))


@dataclass
class Reply:
    """What a model call produced, for assistant: stream holds the
    provider's stream records verbatim (None = the empty stream)."""

    id: str
    model: Model
    content: list
    stream: list | None = None
    usage: Usage | None = None
    interrupted: bool = False


def assistant(turn: int, step: int, r: Reply) -> Input:
    """assistant/message: the model's reply r in step of turn."""
    source = {"kind": "model", "provider": r.model.provider, "model": r.model.name}
    data = {"turn": turn, "step": step, "message": _message(r.id, "assistant", r.content, source), "stream": list(r.stream or [])}
    if r.usage is not None:
        data["usage"] = r.usage.to_json()
    if r.interrupted:
        data["interrupted"] = True
    return _surface(ASSISTANT_MESSAGE, data)


def assistant_text(turn: int, step: int, id: str, m: Model, reply: str) -> Input:
    """assistant/message: reply id of model m with one text block."""
    return assistant(turn, step, Reply(id, m, [text(reply)]))


def assistant_attempt(turn: int, step: int, *stream: Any) -> Input:
    """assistant/attempt: a model call that settled without a message on
    the surface, with its stream records."""
    return Input(ASSISTANT_ATTEMPT, {"turn": turn, "step": step, "stream": list(stream)})


# ---- tools ----


def tool_call(turn: int, step: int, call_id: str, name: str, arguments: str) -> Input:
    """tool/call: execution of call call_id has started."""
    return Input(TOOL_CALL, {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments})


@dataclass
class ToolFailure:
    """The error of a failed tool call."""

    name: str
    code: str
    reason: str = ""


@dataclass
class ToolMessage:
    """A tool call's result, for tool; failure implies is_error; meta is
    any JSON value (None = absent)."""

    id: str
    call_id: str
    content: list
    is_error: bool = False
    failure: ToolFailure | None = None
    meta: Any = None


def tool(turn: int, step: int, m: ToolMessage) -> Input:
    """tool/result: the result m of a tool call in step of turn."""
    msg: dict = {"id": m.id, "role": "tool", "toolCallId": m.call_id}
    if m.is_error or m.failure is not None:
        msg["isError"] = True
    msg["content"] = list(m.content)
    msg["source"] = {"kind": "tool", "callId": m.call_id}
    data = {"turn": turn, "step": step, "message": msg}
    if m.failure is not None:
        data["error"] = {"name": m.failure.name, "code": m.failure.code}
        if m.failure.reason:
            data["error"]["reason"] = m.failure.reason
    if m.meta is not None:
        data["meta"] = m.meta
    return _surface(TOOL_RESULT, data)


def tool_result(turn: int, step: int, id: str, call_id: str, result: str) -> Input:
    """tool/result: the successful result of call call_id as message id."""
    return tool(turn, step, ToolMessage(id, call_id, [text(result)]))


def tool_error(turn: int, step: int, id: str, call_id: str, message: str, failure: ToolFailure | None = None) -> Input:
    """tool/result: call call_id failed; message tells the model, failure is the error."""
    return tool(turn, step, ToolMessage(id, call_id, [text(message)], is_error=True, failure=failure))


def replacing(i: Input, start: int, end: int, *shadowed: int) -> Input:
    """i as the replacement of the surface nodes start … end instead of an
    append, shadowing the events listed."""
    return Input(i.type, i.data, {"op": "replace", "startSeq": start, "endSeq": end}, list(shadowed), i.ignorable)


# ---- request ----


@dataclass
class Config:
    """The model configuration of a header; optional members only when set;
    extra members (a dict) after them."""

    provider: str
    model: str
    reasoning_effort: str = ""
    max_tokens: int = 0
    temperature: float | None = None
    stop: list[str] | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The stored form."""
        c: dict = {"provider": self.provider, "model": self.model}
        if self.reasoning_effort:
            c["reasoningEffort"] = self.reasoning_effort
        if self.max_tokens:
            c["maxTokens"] = self.max_tokens
        if self.temperature is not None:
            c["temperature"] = self.temperature
        if self.stop is not None:
            c["stop"] = list(self.stop)
        c.update(self.extra)
        return c


@dataclass
class ToolSchema:
    """One tool a header declares; parameters is a JSON Schema (None = absent)."""

    name: str
    description: str = ""
    parameters: Any = None
    defer_loading: bool = False

    def to_json(self) -> dict:
        """The stored form."""
        t: dict = {"name": self.name}
        if self.description:
            t["description"] = self.description
        if self.parameters is not None:
            t["parameters"] = self.parameters
        if self.defer_loading:
            t["deferLoading"] = True
        return t


@dataclass
class Header:
    """The request settings of a request/header."""

    config: Config
    tools: list[ToolSchema] = field(default_factory=list)
    default_reasoning_effort: bool = False
    default_max_tokens: bool = False
    starts_series: bool = False


def request_header(h: Header, reason: str) -> Input:
    """request/header: settings h are in force from here on; reason is
    "initial", "resume", "change" or "series"."""
    header: dict = {"config": h.config.to_json()}
    if h.default_reasoning_effort or h.default_max_tokens:
        ad: dict = {}
        if h.default_reasoning_effort:
            ad["reasoningEffort"] = True
        if h.default_max_tokens:
            ad["maxTokens"] = True
        header["adapterDefaults"] = ad
    if h.tools:
        header["tools"] = [t.to_json() for t in h.tools]
    data: dict = {"header": header, "reason": reason}
    if h.starts_series:
        data["startsSeries"] = True
    return Input(REQUEST_HEADER, data)


def request_context(m: Model, context_window: int = 0, system_prompt_update: str = "") -> Input:
    """request/context: the model and context window facts."""
    data: dict = {"provider": m.provider, "model": m.name}
    if context_window:
        data["contextWindow"] = context_window
    if system_prompt_update:
        data["systemPromptUpdate"] = system_prompt_update
    return Input(REQUEST_CONTEXT, data)


@dataclass
class Todo:
    """One item of the agent's to-do list; status is "pending", "in_progress" or "completed"."""

    content: str
    status: str


def todo_write(*todos: Todo) -> Input:
    """todo/write: the agent's whole to-do list."""
    return Input(TODO_WRITE, {"todos": [{"content": t.content, "status": t.status} for t in todos]})


# ---- stored events ----


@dataclass(frozen=True)
class Event:
    """One stored event: envelope is the canonical envelope exactly as the
    server sent it; data_text the data's own text within it (lossless);
    data parses it on first use (integers exact, fractions as float; see
    loads_lossless for exact decimals)."""

    seq: int
    time: int
    type: str
    surface_op: SurfaceOp | None
    source_event_seqs: list[int] | None
    ignorable: bool
    envelope: str

    @classmethod
    def parse(cls, envelope: str) -> "Event":
        """Read a canonical envelope."""
        e = json.loads(envelope)
        return cls(e["seq"], e["time"], e["type"], e.get("surfaceOp"), e.get("sourceEventSeqs"), e.get("ignorable") is True, envelope)

    @cached_property
    def data_text(self) -> str:
        """The text of data in the envelope, byte for byte."""
        t = member_text(self.envelope, "data")
        if t is None:
            raise ValueError(f"logbook: the envelope of seq {self.seq} has no data")
        return t

    @cached_property
    def data(self) -> Any:
        """data parsed with json.loads."""
        return json.loads(self.data_text)
