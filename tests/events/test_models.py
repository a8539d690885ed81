"""The event models: delta events built from two strings skip the validator and are the same objects."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from streamkit.events import ReasoningDelta, TextDelta, ToolCallArgsDelta, chat_event_adapter

DELTAS = [TextDelta, ReasoningDelta, ToolCallArgsDelta]


@pytest.mark.parametrize("cls", DELTAS)
@given(id=st.text(), delta=st.text())
def test_a_delta_built_from_strings_is_the_validated_event(cls: type[TextDelta], id: str, delta: str) -> None:
    fast = cls(id=id, delta=delta)
    slow = cls.model_validate({"id": id, "delta": delta})
    parsed = chat_event_adapter.validate_python({"type": slow.type, "id": id, "delta": delta})
    for other in (slow, parsed):
        assert fast == other and type(fast) is type(other)
        assert fast.__dict__ == other.__dict__ and list(fast.__dict__) == list(other.__dict__)
        assert fast.model_fields_set == other.model_fields_set - {"type"}  # the parsed one was given its tag
        assert fast.__pydantic_extra__ == other.__pydantic_extra__
        assert fast.__pydantic_private__ == other.__pydantic_private__
        assert hash(fast) == hash(other)
        assert fast.model_dump() == other.model_dump()
        assert fast.model_dump_json() == other.model_dump_json()
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert pickle.loads(pickle.dumps(fast)) == fast
    assert copy.deepcopy(fast) == fast
    assert fast.model_copy(update={"delta": "x"}).delta == "x"


@pytest.mark.parametrize("cls", DELTAS)
def test_anything_but_two_strings_is_validated(cls: type[TextDelta]) -> None:
    class Text(str):
        pass

    with pytest.raises(ValidationError, match="id"):
        cls(id=1, delta="x")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="delta"):
        cls(id="a", delta=None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="delta"):
        cls(id="a")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="extra"):
        cls(id="a", delta="x", more=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="type"):
        cls(id="a", delta="x", type="other")  # type: ignore[arg-type]
    assert cls(id="a", delta="x", type=cls.model_fields["type"].default) == cls(id="a", delta="x")
    sub = cls(id=Text("a"), delta=Text("x"))
    assert sub == cls(id="a", delta="x") and type(sub.id) is str
    with pytest.raises(TypeError):
        cls("a", "x")  # type: ignore[misc]


@pytest.mark.parametrize("cls", DELTAS)
def test_a_delta_stays_immutable(cls: type[TextDelta]) -> None:
    event = cls(id="a", delta="x")
    with pytest.raises(ValidationError):
        event.delta = "y"  # type: ignore[misc]
