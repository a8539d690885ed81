"""JSON read as the ``useChat`` client reads it mid-stream: a truncated text repaired, forbidden keys refused.

:func:`parse_partial_json` is the client's ``parsePartialJson``: a text that does not parse is repaired by
``_fix_json`` (the client's ``fixJson``, a character-level state machine ported state for state, which closes
the strings, literals, arrays and objects a truncated text left open) and parsed again. Like the client's
``secureJsonParse``, a value with a key :func:`has_unsafe_key` names does not parse.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["has_unsafe_key", "parse_partial_json"]


def _fix_json(text: str) -> str:
    """Close what a truncated JSON text left open (the client's ``fixJson``, state for state)."""
    stack = ["ROOT"]
    last = -1
    literal_start = 0
    hex_digits = 0

    def value_start(ch: str, i: int, swap: str) -> None:
        nonlocal last, literal_start
        if ch == '"':
            last = i
            stack[-1] = swap
            stack.append("STRING")
        elif ch in "ftn":
            last = i
            literal_start = i
            stack[-1] = swap
            stack.append("LITERAL")
        elif ch == "-":
            stack[-1] = swap
            stack.append("NUMBER")
        elif ch in "0123456789":
            last = i
            stack[-1] = swap
            stack.append("NUMBER")
        elif ch == "{":
            last = i
            stack[-1] = swap
            stack.append("OBJECT_START")
        elif ch == "[":
            last = i
            stack[-1] = swap
            stack.append("ARRAY_START")

    def after_object_value(ch: str, i: int) -> None:
        nonlocal last
        if ch == ",":
            stack[-1] = "OBJECT_AFTER_COMMA"
        elif ch == "}":
            last = i
            stack.pop()

    def after_array_value(ch: str, i: int) -> None:
        nonlocal last
        if ch == ",":
            stack[-1] = "ARRAY_AFTER_COMMA"
        elif ch == "]":
            last = i
            stack.pop()

    for i, ch in enumerate(text):
        if not stack:
            break
        state = stack[-1]
        if state == "ROOT":
            value_start(ch, i, "FINISH")
        elif state == "OBJECT_START":
            if ch == '"':
                stack[-1] = "OBJECT_KEY"
            elif ch == "}":
                last = i
                stack.pop()
        elif state == "OBJECT_AFTER_COMMA":
            if ch == '"':
                stack[-1] = "OBJECT_KEY"
        elif state == "OBJECT_KEY":
            if ch == '"':
                stack[-1] = "OBJECT_AFTER_KEY"
        elif state == "OBJECT_AFTER_KEY":
            if ch == ":":
                stack[-1] = "OBJECT_BEFORE_VALUE"
        elif state == "OBJECT_BEFORE_VALUE":
            value_start(ch, i, "OBJECT_AFTER_VALUE")
        elif state == "OBJECT_AFTER_VALUE":
            after_object_value(ch, i)
        elif state == "STRING":
            if ch == '"':
                stack.pop()
                last = i
            elif ch == "\\":
                stack.append("STRING_ESCAPE")
            else:
                last = i
        elif state == "ARRAY_START":
            if ch == "]":
                last = i
                stack.pop()
            else:
                value_start(ch, i, "ARRAY_AFTER_VALUE")
        elif state == "ARRAY_AFTER_VALUE":
            if ch == ",":
                stack[-1] = "ARRAY_AFTER_COMMA"
            elif ch == "]":
                last = i
                stack.pop()
            else:
                last = i
        elif state == "ARRAY_AFTER_COMMA":
            value_start(ch, i, "ARRAY_AFTER_VALUE")
        elif state == "STRING_ESCAPE":
            stack.pop()
            if ch == "u":
                hex_digits = 0
                stack.append("STRING_UNICODE_ESCAPE")
            else:
                last = i
        elif state == "STRING_UNICODE_ESCAPE":
            if ch in "0123456789abcdefABCDEF":
                hex_digits += 1
                if hex_digits == 4:
                    stack.pop()
                    last = i
        elif state == "NUMBER":
            if ch in "0123456789":
                last = i
            elif ch in "eE-.":
                pass
            elif ch == ",":
                stack.pop()
                if stack and stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
                if stack and stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
            elif ch == "}":
                stack.pop()
                if stack and stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
            elif ch == "]":
                stack.pop()
                if stack and stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
            else:
                stack.pop()
        elif state == "LITERAL":
            partial = text[literal_start : i + 1]
            if not ("false".startswith(partial) or "true".startswith(partial) or "null".startswith(partial)):
                stack.pop()
                if stack and stack[-1] == "OBJECT_AFTER_VALUE":
                    after_object_value(ch, i)
                elif stack and stack[-1] == "ARRAY_AFTER_VALUE":
                    after_array_value(ch, i)
            else:
                last = i

    result = text[: last + 1]
    for state in reversed(stack):
        if state == "STRING":
            result += '"'
        elif state.startswith("OBJECT"):
            result += "}"
        elif state.startswith("ARRAY"):
            result += "]"
        elif state == "LITERAL":
            partial = text[literal_start:]
            for word in ("true", "false", "null"):
                if word.startswith(partial):
                    result += word[len(partial) :]
                    break
    return result


def _loads(text: str) -> Any:
    value = orjson.loads(text)
    if has_unsafe_key(value):
        raise ValueError("unsafe key")
    return value


def has_unsafe_key(value: Any) -> bool:
    """True if ``value`` holds a key the client's secure JSON parse refuses: ``__proto__``, or ``constructor``
    holding an object with ``prototype``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "__proto__" or (key == "constructor" and isinstance(item, dict) and "prototype" in item):
                return True
            if has_unsafe_key(item):
                return True
    elif isinstance(value, list):
        return any(has_unsafe_key(v) for v in value)
    return False


def parse_partial_json(text: str) -> tuple[Any, str]:
    """The value of a possibly truncated JSON text as the client sees it mid-stream, and how it was read:
    ``successful-parse``, ``repaired-parse`` (after closing what was left open) or ``failed-parse`` (value
    ``None``), as the client's ``parsePartialJson``."""
    try:
        return _loads(text), "successful-parse"
    except ValueError:
        pass
    try:
        return _loads(_fix_json(text)), "repaired-parse"
    except ValueError:
        return None, "failed-parse"
