"""Property tests: for generated ChatEvent sequences, the chunk stream keeps every rule of spec section 5.2
and the schema of the chosen client version, and folding it gives back what the events meant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit.aisdk import AISDKMapper, UIMessageFolder, encode
from streamkit.events import ChatEvent, ProtocolError, SequenceChecker
from streamkit.stringify import dumps
from tests.aisdk.model import check_invariants, comparable, meaning, observed, split_frames
from tests.aisdk.strategies import chat_events, describe, sloppy_runs
from tests.support.streams import collect_bytes

VERSIONS = st.sampled_from([5, 6, 7])


def _map(events: list[ChatEvent], version: int) -> list[dict[str, Any]]:
    mapper = AISDKMapper(sdk_version=version)
    chunks = [chunk for event in events for chunk in mapper.feed(event)]
    return chunks + mapper.close()


def _fold(chunks: list[dict[str, Any]], version: int = 7) -> UIMessageFolder:
    folder = UIMessageFolder(sdk_version=version)
    for chunk in chunks:
        folder.feed(chunk)
    return folder


def _body(events: Any, **options: Any) -> bytes:
    return collect_bytes(encode(events, **options))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(events=chat_events, version=VERSIONS)
def test_chunk_stream_keeps_the_rules_and_the_meaning(events: list[ChatEvent], version: int) -> None:
    chunks = _map(events, version)
    check_invariants(chunks, sdk_version=version)
    folder = _fold(chunks, version)
    message = orjson.loads(dumps(folder.message))
    got = comparable(observed(message, finish_reason=folder.finish_reason, error=folder.error))
    want = comparable(meaning(events, sdk_version=version))
    assert got == want, describe(events)


@settings(max_examples=100, deadline=None)
@given(events=chat_events, version=VERSIONS, live=st.booleans())
def test_encode_writes_exactly_the_mapped_chunks(events: list[ChatEvent], version: int, live: bool) -> None:
    """``encode`` (with its delta fast path, over a list or a live async stream) writes the frames ``feed``
    returns, byte for byte."""

    async def stream() -> AsyncIterator[ChatEvent]:
        for event in events:
            yield event

    body = _body(stream() if live else events, sdk_version=version, message_id="msg-fixed")
    mapper = AISDKMapper(sdk_version=version, message_id="msg-fixed")
    expected = [chunk for event in events for chunk in mapper.feed(event)] + mapper.close()
    assert body == b"".join(b"data: " + dumps(chunk) + b"\n\n" for chunk in expected) + b"data: [DONE]\n\n"


@settings(max_examples=80, deadline=None)
@given(events=chat_events, cut=st.integers(min_value=0, max_value=30), version=VERSIONS)
def test_an_agent_exception_ends_the_stream_properly(events: list[ChatEvent], cut: int, version: int) -> None:
    async def agent() -> AsyncIterator[ChatEvent]:
        for event in events[:cut]:
            yield event
        raise RuntimeError("secret detail")

    checker = SequenceChecker()
    before = [out for event in events[:cut] for out in checker.feed(event)]
    ended_by_error = checker.finished and before[-1].type == "run-error"
    seen: list[BaseException] = []
    chunks = split_frames(_body(agent(), sdk_version=version, on_error=seen.append))
    check_invariants(chunks, sdk_version=version)
    assert [str(e) for e in seen] == ["secret detail"]
    assert "secret detail" not in orjson.dumps(chunks).decode()
    if ended_by_error:
        assert chunks[-1] == {"type": "error", "errorText": before[-1].message}  # type: ignore[union-attr]
    else:
        assert chunks[-1] == {"type": "error", "errorText": "An error occurred."}
        assert [c for c in chunks if c["type"] == "error"] == [chunks[-1]]
    assert _fold(chunks, version).error == chunks[-1]["errorText"]


@settings(max_examples=60, deadline=None)
@given(events=sloppy_runs())
def test_strict_mode_raises_or_passes_a_clean_run(events: list[ChatEvent]) -> None:
    mapper = AISDKMapper(strict=True)
    try:
        chunks = [c for e in events for c in mapper.feed(e)] + mapper.close()
    except ProtocolError:
        return
    check_invariants(chunks)


@pytest.mark.parametrize("version", [5, 6, 7])
def test_empty_stream_is_a_complete_run(version: int) -> None:
    chunks = split_frames(_body([], sdk_version=version, message_id="m"))
    assert chunks == [{"type": "start", "messageId": "m"}, {"type": "finish", "finishReason": "stop"}]
