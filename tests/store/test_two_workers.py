"""Two uvicorn worker processes sharing one real Redis: resume and reattach across workers with the real
clients, owner checks and cancel across workers, and a worker killed mid-run."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from streamkit.resumable import LOST_TEXT
from tests.store.processes import Worker
from tests.support.oracle import JsOracle

LEASE = 1.5
PACE = 0.03
ALICE = {"authorization": "Bearer alice"}
BOB = {"authorization": "Bearer bob"}


@pytest.fixture(scope="module")
def prefix() -> str:
    return f"w{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def pair(redis_url: str, prefix: str) -> Iterator[tuple[Worker, Worker]]:
    """Workers A and B on one Redis."""
    a = Worker(redis_url, prefix, lease=LEASE, pace=PACE)
    try:
        b = Worker(redis_url, prefix, lease=LEASE, pace=PACE)
    except BaseException:
        a.stop()
        raise
    yield a, b
    a.stop()
    b.stop()


def chat_body(chat: str) -> dict[str, Any]:
    return {
        "id": chat,
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather in Paris?"}]}],
        "trigger": "submit-message",
    }


def sse_frames(data: bytes) -> list[tuple[str | None, Any]]:
    """``(id, payload)`` per SSE event (payload parsed JSON, or the raw text such as ``[DONE]``)."""
    out: list[tuple[str | None, Any]] = []
    for block in data.split(b"\n\n"):
        payload = None
        ident = None
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                raw = line[6:]
                payload = raw.decode() if raw == b"[DONE]" else orjson.loads(raw)
            elif line.startswith(b"id: "):
                ident = line[4:].decode()
        if payload is not None:
            out.append((ident, payload))
    return out


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "id"}


# -- AI SDK ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["same-tab", "reload"])
def test_aisdk_stream_dropped_on_a_resumes_on_b(js: JsOracle, pair: tuple[Worker, Worker], mode: str) -> None:
    a, b = pair
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    common = {"post": a.url + "/api/chat", "resume_base": b.url, "text": "weather in Paris?", "headers": ALICE}
    got = js.result("resume_aisdk", {**common, "chat_id": chat, "drop_after": 3, "mode": mode})
    ref = js.result("resume_aisdk", {**common, "chat_id": chat + "-ref", "drop_after": None, "mode": "none"})

    assert got["dropped"], "the POST response was not cut"
    assert [(r["method"], r["url"].split("/api")[0], r["status"]) for r in got["requests"]] == [
        ("POST", a.url, 200),
        ("GET", b.url, 200),
    ]
    assert got["error"] is None and got["status"] == "ready"
    assert ref["error"] is None and ref["status"] == "ready"
    assistants = [m for m in got["messages"] if m["role"] == "assistant"]
    assert len(assistants) == 1
    assert assistants[0]["id"] == got["startMessageId"]  # the same message, resumed from its `start`
    ref_assistant = next(m for m in ref["messages"] if m["role"] == "assistant")
    assert without_ids(assistants[0]) == without_ids(ref_assistant)
    assert [without_ids(m) for m in got["messages"] if m["role"] == "user"] == [
        without_ids(m) for m in ref["messages"] if m["role"] == "user"
    ]
    text = "".join(p.get("text", "") for p in assistants[0]["parts"] if p["type"] == "text")
    assert "word11" in text and "more11" in text


def test_aisdk_resume_without_an_active_run_is_204(js: JsOracle, pair: tuple[Worker, Worker]) -> None:
    a, b = pair
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    got = js.result(
        "resume_aisdk",
        {
            "post": a.url + "/api/chat",
            "resume_base": b.url,
            "chat_id": "nothing-running",
            "headers": ALICE,
            "resume_only": True,
            "messages": [user],
        },
    )
    assert [(r["method"], r["status"]) for r in got["requests"]] == [("GET", 204)]
    assert got["status"] == "ready" and got["error"] is None
    assert [m["id"] for m in got["messages"]] == ["u1"]


class Reader:
    """Reads a streamed response bit by bit."""

    def __init__(self, response: httpx.Response) -> None:
        self.chunks = response.iter_raw()
        self.data = b""

    def until(self, pattern: bytes) -> bytes:
        """Read until ``pattern`` arrived (or the body ended); everything read so far."""
        for chunk in self.chunks:
            self.data += chunk
            if pattern in self.data:
                break
        return self.data

    def rest(self) -> bytes:
        """Read to the end; the whole body."""
        for chunk in self.chunks:
            self.data += chunk
        return self.data


def read_until(response: httpx.Response, pattern: bytes) -> bytes:
    return Reader(response).until(pattern)


def test_only_the_owner_may_resume_or_cancel_from_any_worker(pair: tuple[Worker, Worker]) -> None:
    a, b = pair
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    stream_path = f"/api/chat/{chat}/stream"
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", a.url + "/api/chat", json=chat_body(chat), headers=ALICE) as response:
            assert response.status_code == 200
            head = read_until(response, b'"text-delta"')
        assert b'"type":"start"' in head
        assert client.get(b.url + stream_path).status_code == 401
        assert client.get(b.url + stream_path, headers=BOB).status_code == 204
        refused = client.delete(b.url + stream_path, headers=BOB)
        assert refused.status_code == 404 and refused.json()["error"]["status"] == 404
        with client.stream("GET", b.url + stream_path, headers=ALICE) as response:
            assert response.status_code == 200
            assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
            reader = Reader(response)
            replay = reader.until(b'"text-delta"')
            assert sse_frames(replay)[0][1]["type"] == "start"
            assert client.delete(a.url + stream_path, headers=ALICE).status_code == 204
            rest = reader.rest()
        frames = [p for _, p in sse_frames(rest)]
        assert frames[-1] == "[DONE]" and frames[-2]["type"] == "abort"
        assert [p for _, p in sse_frames(head)] == frames[: len(sse_frames(head))]
        assert client.get(b.url + stream_path, headers=ALICE).status_code == 204  # over
        assert client.delete(b.url + stream_path, headers=ALICE).status_code == 404


def test_last_event_id_resumes_after_that_frame(pair: tuple[Worker, Worker]) -> None:
    a, b = pair
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    stream = b.url + f"/api/chat/{chat}/stream"
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", a.url + "/api/chat", json=chat_body(chat), headers=ALICE) as response:
            head = sse_frames(read_until(response, b'"text-delta"'))
        # The client saw the frames up to its first text delta (within a stored batch), then dropped.
        cut = next(n for n, (_, p) in enumerate(head) if p["type"] == "text-delta") + 1
        seen = head[:cut]
        last = seen[-1][0]
        assert last is not None and all(i is not None for i, _ in seen)  # every frame names its place
        with (
            client.stream("GET", stream, headers=ALICE) as whole,
            client.stream("GET", stream, headers={**ALICE, "last-event-id": last}) as rest,
        ):
            assert whole.status_code == 200 and rest.status_code == 200
            whole_body, tail = whole.read(), rest.read()
        assert client.get(stream, headers=ALICE).status_code == 204  # the run is over: nothing to resume
        frames = sse_frames(tail)
        assert [p for _, p in seen] + [p for _, p in frames] == [p for _, p in sse_frames(whole_body)]
        assert frames[0][1]["type"] != "start" and frames[-1][1] == "[DONE]"
        bad = client.get(stream, headers={**ALICE, "last-event-id": "x"})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "last-event-id"


# -- AG-UI -------------------------------------------------------------------------------------------


def agui_request(a: Worker, b: Worker | None, thread: str, **extra: Any) -> dict[str, Any]:
    return {
        "url": a.url + "/api/agui",
        "reattach": None if b is None else b.url + "/api/agui/reattach",
        "thread_id": thread,
        "run_id": "run-" + thread,
        "messages": [{"id": "u1", "role": "user", "content": "weather in Paris?"}],
        "state": {"progress": -1},
        "headers": ALICE,
        **extra,
    }


def normalized(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with the server-invented ids (tool results) replaced by their position."""
    return [{**m, "id": i} if m["role"] == "tool" else m for i, m in enumerate(messages)]


@pytest.mark.parametrize("mode", ["same-tab", "reload"])
def test_agui_run_dropped_on_a_reattaches_on_b(js: JsOracle, pair: tuple[Worker, Worker], mode: str) -> None:
    a, b = pair
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    answer = js.call("resume_agui", agui_request(a, b, thread, drop_after=3, mode=mode))
    assert answer["ok"], answer
    got = answer["result"]
    ref = js.result("resume_agui", agui_request(a, None, thread + "-ref", drop_after=None))
    assert got["dropped"]
    assert got["error"] is None, got["error"]
    assert got["events"][:3] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    assert got["events"][-1] == "RUN_FINISHED"
    assert normalized(got["messages"]) == normalized(ref["messages"])
    assert got["state"] == ref["state"] == {"progress": 100, "notes": ["looked up Paris", "answered"]}
    assert not [w for w in answer["warnings"] if "[ag-ui]" in w or "patch" in w.lower()]


def test_agui_reattach_checks_the_owner_and_cancel_reaches_the_run(pair: tuple[Worker, Worker]) -> None:
    a, b = pair
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    body = {
        "threadId": thread,
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "hi"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "protocolVersion": "1.0",  # as @ag-ui/client 1.0 declares (a stop is then the cancelled outcome)
    }
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", a.url + "/api/agui", json=body, headers=ALICE) as response:
            assert response.status_code == 200
            read_until(response, b"TEXT_MESSAGE_CONTENT")
        reattach = {**body, "runId": "r2"}
        assert client.post(b.url + "/api/agui/reattach", json=reattach, headers=BOB).status_code == 204
        assert client.post(b.url + "/api/agui/cancel", json={"threadId": thread}, headers=BOB).status_code == 404
        with client.stream("POST", b.url + "/api/agui/reattach", json=reattach, headers=ALICE) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            reader = Reader(response)
            reader.until(b"STATE_SNAPSHOT")
            assert client.post(a.url + "/api/agui/cancel", json={"threadId": thread}, headers=ALICE).status_code == 204
            rest = reader.rest()
        events = [p for _, p in sse_frames(rest)]
        assert [e["type"] for e in events[:3]] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
        assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
        assert client.post(b.url + "/api/agui/reattach", json=reattach, headers=ALICE).status_code == 204


# -- a worker dies ------------------------------------------------------------------------------------


def test_a_killed_worker_ends_its_readers_with_a_terminal_frame(
    js: JsOracle, pair: tuple[Worker, Worker], redis_url: str, prefix: str
) -> None:
    _, b = pair
    doomed = Worker(redis_url, prefix, lease=LEASE, pace=PACE)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    try:
        client = httpx.Client(timeout=20)
        post = client.send(
            client.build_request("POST", doomed.url + "/api/chat", json=chat_body(chat), headers=ALICE), stream=True
        )
        seen_on_a = read_until(post, b'"text-delta"')
        follower: dict[str, Any] = {}

        def follow() -> None:
            with httpx.Client(timeout=20) as c, c.stream("GET", b.url + f"/api/chat/{chat}/stream", headers=ALICE) as r:
                follower["status"] = r.status_code
                follower["body"] = b"".join(r.iter_raw())
                follower["ended"] = time.monotonic()

        thread = threading.Thread(target=follow)
        thread.start()
        time.sleep(0.3)
        doomed.kill()
        killed = time.monotonic()
        thread.join(timeout=15)
        assert not thread.is_alive(), "the reader on B never ended"
        post.close()
        client.close()
    finally:
        doomed.stop()

    assert follower["status"] == 200
    body: bytes = follower["body"]
    assert follower["ended"] - killed < LEASE + 1.0  # detected within the lease (plus the reader's wake-up)
    frames = sse_frames(body)
    ids = [int(i) for i, _ in frames if i is not None and "." not in i]  # the entries' last frames
    assert ids == list(range(1, len(ids) + 1))  # every stored entry, none twice, none missing
    assert all(i is not None for i, _ in frames)
    payloads = [p for _, p in frames]
    assert payloads[0]["type"] == "start"
    assert payloads[-2] == {"type": "error", "errorText": LOST_TEXT} and payloads[-1] == "[DONE]"
    # What A's own client got is a prefix of what B's reader got.
    assert payloads[: len(sse_frames(seen_on_a))] == [p for _, p in sse_frames(seen_on_a)]
    words = re.findall(rb"word(\d+) ", b"".join(orjson.dumps(p) for p in payloads if isinstance(p, dict)))
    assert [int(w) for w in words] == list(range(len(words)))  # contiguous: nothing lost in the middle
    parsed = js.result("resume_aisdk", {"body": body.decode()})
    assert parsed["error"] == {"name": "Error", "message": LOST_TEXT}  # the real client reports the loss
    text = "".join(p["text"] for p in parsed["message"]["parts"] if p["type"] == "text")
    assert text == "".join(f"word{i} " for i in range(len(words)))  # and keeps every word produced
