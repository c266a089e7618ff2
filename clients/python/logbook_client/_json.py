"""Lossless JSON helpers: RawJSON text sent as written, an encoder that
keeps member order, and member_text, which finds a member's text in a
document the server wrote without decoding it."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

_decoder = json.JSONDecoder()


class RawJSON:
    """JSON text sent verbatim (number literals and member order kept)
    wherever a JSON value goes in an input. The server validates it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"RawJSON({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawJSON) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def encode_json(v: Any) -> str:
    """Write v as compact JSON text: dicts keep their order, None members
    are written as null, RawJSON verbatim, Decimal as its literal; NaN and
    infinities are a ValueError."""
    if isinstance(v, RawJSON):
        return v.text
    if v is None or isinstance(v, (bool, str)):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"logbook: {v} is not a JSON number")
        return json.dumps(v)
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise ValueError(f"logbook: {v} is not a JSON number")
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + encode_json(el) for k, el in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(encode_json(el) for el in v) + "]"
    raise TypeError(f"logbook: a {type(v).__name__} is not a JSON value")


def _skip_space(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t\r\n":
        i += 1
    return i


def member_text(text: str, name: str) -> str | None:
    """The text of member name of the JSON object text (first occurrence),
    None when there is none."""
    i = _skip_space(text, 0)
    if not text.startswith("{", i):
        return None
    i = _skip_space(text, i + 1)
    while i < len(text) and text[i] != "}":
        key, i = _decoder.raw_decode(text, i)
        i = _skip_space(text, _skip_space(text, i) + 1)  # past the colon
        _, end = _decoder.raw_decode(text, i)
        if key == name:
            return text[i:end]
        i = _skip_space(text, end)
        if text.startswith(",", i):
            i = _skip_space(text, i + 1)
    return None


def loads_lossless(text: str) -> Any:
    """Parse JSON text keeping every number exact: integers as int,
    fractions and exponents as Decimal."""
    return json.loads(text, parse_float=Decimal)
