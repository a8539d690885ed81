"""AG-UI reattach: for every point where a connection may drop, the reattach run brings the real client to
exactly the messages and state of an uninterrupted run (same tab and fresh page)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamkit.agui.fold import fold
from streamkit.agui.mapping import AGUIMapper
from streamkit.agui.resume import GONE_TEXT, frames_of, reattach, snapshot
from streamkit.frames import encode_frames
from streamkit.store import MemoryStore
from tests.store.resume_agent import scripted
from tests.support.oracle import JsOracle

THREAD, RUN = "thread-1", "run-1"
INPUT = [{"id": "u1", "role": "user", "content": "weather in Paris?"}]
STATE = {"progress": -1}


async def stored_run(store: MemoryStore, *, batch: int = 1, end: bool = True) -> list[bytes]:
    """The scripted run, mapped and encoded, appended ``batch`` frames per entry; the entries."""
    mapper = AGUIMapper(thread_id=THREAD, run_id=RUN, state=STATE, reserved_ids=["u1"])
    chunks = [c async for c in encode_frames(scripted(), mapper)]
    await store.create("r", owner="o")
    entries = []
    for i in range(0, len(chunks) - 1, batch):
        group = chunks[i : i + batch]
        await store.append("r", group)
        entries.append(b"".join(group))
    if end:
        await store.finish("r", chunks[-1])
        entries.append(chunks[-1])
    return entries


async def reattached(store: MemoryStore, upto: int) -> bytes:
    parts = [
        c async for c in reattach(store.read("r"), upto=upto, thread_id=THREAD, run_id=RUN, messages=INPUT, state=STATE)
    ]
    return b"".join(parts)


@pytest.mark.parametrize("batch", [1, 3])
async def test_every_cut_point_reattaches_to_the_uninterrupted_result(js: JsOracle, batch: int) -> None:
    store = MemoryStore()
    entries = await stored_run(store, batch=batch)
    full = b"".join(entries)
    expected = js.result("resume_agui", {"bodies": [full.decode()], "messages": INPUT, "state": STATE})
    assert expected["runs"][0]["error"] is None
    assert expected["state"]["progress"] == 100
    for cut in range(len(entries)):
        body = await reattached(store, cut)
        # The reattach run is well-formed on its own.
        types = [e["type"] for e in frames_of(body)]
        assert types[:3] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"], cut
        assert types.count("RUN_STARTED") == 1 and types[-1] == "RUN_FINISHED", cut
        head = b"".join(entries[:cut])
        same_tab = js.call("resume_agui", {"bodies": [head.decode(), body.decode()], "messages": INPUT, "state": STATE})
        fresh = js.call("resume_agui", {"bodies": [body.decode()], "messages": INPUT, "state": STATE})
        for answer in (same_tab, fresh):
            assert answer["ok"], answer
            result = answer["result"]
            assert all(run["error"] is None for run in result["runs"]), (cut, result["runs"])
            assert result["messages"] == expected["messages"], cut
            assert result["state"] == expected["state"], cut
            assert not [w for w in answer["warnings"] if "ag-ui" in w.lower() or "patch" in w.lower()], cut
        # Our own fold agrees with the client.
        assert fold(frames_of(body), messages=INPUT, state=STATE).messages == expected["messages"]


async def test_ids_number_the_tail_by_stored_sequence() -> None:
    store = MemoryStore()
    entries = await stored_run(store)
    body = await reattached(store, 5)
    ids = [line[4:].decode() for line in body.split(b"\n") if line.startswith(b"id: ")]
    tail = [
        str(seq) if k == entries[seq - 1].count(b"\n\n") else f"{seq}.{k}"
        for seq in range(6, len(entries) + 1)
        for k in range(1, entries[seq - 1].count(b"\n\n") + 1)
    ]
    assert ids == ["5", *tail]  # the opening's last frame names the entries it folds; then every frame its own


async def test_reattach_while_the_run_is_live_then_follows_it() -> None:
    store = MemoryStore()
    entries = await stored_run(store, end=False)
    got: list[bytes] = []

    async def follow() -> None:
        async for chunk in reattach(store.read("r"), upto=len(entries), thread_id=THREAD, run_id=RUN, messages=INPUT):
            got.append(chunk)

    import asyncio

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.05)
    assert len(got) == 1  # the opening, then it waits for the tail
    await store.finish("r", b'data: {"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1"}\n\n')
    await asyncio.wait_for(task, 2)
    assert [e["type"] for e in frames_of(b"".join(got))][-1] == "RUN_FINISHED"


def test_snapshot_reopens_what_is_open_and_closes_nothing_twice() -> None:
    events: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "REASONING_START", "messageId": "m0"},
        {"type": "REASONING_MESSAGE_START", "messageId": "m0", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "m0", "delta": "hm"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hel"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "m1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    ]
    out = snapshot(events, thread_id="t", run_id="r", messages=[], state={"a": 1})
    assert [e["type"] for e in out] == [
        "RUN_STARTED",
        "MESSAGES_SNAPSHOT",
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "TEXT_MESSAGE_START",
    ]
    assert out[2]["snapshot"] == {"a": 1}
    text = next(m for m in out[1]["messages"] if m["id"] == "m1")
    assert text["content"] == "Hel" and text["toolCalls"][0]["function"]["arguments"] == "{"
    done = snapshot([*events, {"type": "RUN_ERROR", "message": "x"}], thread_id="t", run_id="r")
    assert [e["type"] for e in done][-1] == "RUN_ERROR" and len(done) == 4


async def test_a_run_gone_before_reading_still_gets_a_well_formed_answer() -> None:
    store = MemoryStore()
    body = b"".join([c async for c in reattach(store.read("nope"), upto=3, thread_id="t", run_id="r", messages=INPUT)])
    events = frames_of(body)
    assert [e["type"] for e in events] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_ERROR"]
    assert events[1]["messages"] == INPUT and events[-1]["message"] == GONE_TEXT
    assert json.loads(body.split(b"\n")[0][6:])["threadId"] == "t"
