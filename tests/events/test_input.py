"""The input models: frozen, and those given the same fields share one set of the given names."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import ValidationError

from streamkit.events import Message, RunInput, TextPart, last_user_text


def _run(thread: str, text: str) -> RunInput:
    return RunInput(
        thread_id=thread, run_id=f"run-{thread}", messages=[Message(id="m", role="user", parts=[TextPart(text=text)])]
    )


def test_models_given_the_same_fields_share_the_set_of_their_names() -> None:
    a, b = _run("a", "hello"), _run("b", "other")
    assert a.model_fields_set == {"thread_id", "run_id", "messages"}
    assert a.model_fields_set is b.model_fields_set
    assert a.messages[0].model_fields_set is b.messages[0].model_fields_set
    bare = RunInput(thread_id="c", run_id="r")
    assert bare.model_fields_set == {"thread_id", "run_id"}
    assert bare.model_fields_set is not a.model_fields_set


def test_a_shared_set_never_changes() -> None:
    a, b = _run("a", "hello"), _run("b", "other")
    shared = set(a.model_fields_set)
    with pytest.raises(ValidationError):
        a.thread_id = "x"  # type: ignore[misc]  # frozen: a set of given names is never added to
    changed = a.model_copy(update={"state": {"n": 1}})
    assert changed.model_fields_set == shared | {"state"}
    assert a.model_fields_set == b.model_fields_set == shared
    for other in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert other == a and other.model_fields_set == shared
    assert a.model_dump(exclude_unset=True) == {
        "thread_id": "a",
        "run_id": "run-a",
        "messages": [{"id": "m", "role": "user", "parts": [{"text": "hello"}]}],
    }
    assert last_user_text(a) == "hello" and last_user_text(b) == "other"
