"""``Last-Event-ID`` resumes on every protocol, read by a generic SSE client (as an ``EventSource`` reconnects):
from the id of any frame a client saw, stored batch boundary or not, each later frame comes exactly once.

A live server (in-memory store) runs an agent that writes bursts of frames (several per stored batch) and waits
at a gate after each, so the run is still in progress while the test resumes from every frame of what it read.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from streamkit import agui, aisdk, dsh
from streamkit.events import ChatEvent, RunFinished, RunInput, RunStarted, TextDelta, TextEnd, TextStart
from streamkit.serve import StreamOptions
from streamkit.store import MemoryStore

WORDS = 12


class Bursts:
    """Two bursts of text deltas (a pause in the middle of each, so each spans stored batches), each followed by
    a gate the test opens."""

    def __init__(self) -> None:
        self.gates = [threading.Event(), threading.Event()]

    async def __call__(self, run: RunInput) -> AsyncIterator[ChatEvent]:
        yield RunStarted()
        yield TextStart(id="t")
        for burst, gate in enumerate(self.gates):
            for i in range(WORDS):
                yield TextDelta(id="t", delta=f"b{burst}w{i} ")
                if i == WORDS // 2:
                    await asyncio.sleep(0.08)
            while not gate.is_set():
                await asyncio.sleep(0.01)
        yield TextEnd(id="t")
        yield RunFinished()


@dataclass(frozen=True)
class Event:
    """One SSE event as a generic client sees it: its raw block (id line included) and its id."""

    raw: bytes
    id: str | None


class SSEReader:
    """A generic SSE client over a streamed response: complete events as they arrive, comments skipped."""

    def __init__(self, response: httpx.Response) -> None:
        self.chunks = response.iter_raw()
        self.buffer = b""
        self.events: list[Event] = []

    def _parse(self) -> None:
        *blocks, self.buffer = self.buffer.split(b"\n\n")
        for block in blocks:
            lines = [line for line in block.split(b"\n") if line and not line.startswith(b":")]
            if not lines:
                continue
            ident = next((line[4:].decode() for line in lines if line.startswith(b"id: ")), None)
            self.events.append(Event(block, ident))

    def until(self, done: Callable[[list[Event]], bool]) -> list[Event]:
        """Read until ``done(events)``; the events read."""
        while not done(self.events):
            self.buffer += next(self.chunks)
            self._parse()
        return self.events


@dataclass(frozen=True)
class Protocol:
    """How a protocol's run is started and resumed."""

    name: str
    routes: Callable[[Any, StreamOptions], list[Any]]
    post: tuple[str, dict[str, Any]]
    resume: tuple[str, str, dict[str, Any] | None]


PROTOCOLS = [
    Protocol(
        "aisdk",
        lambda agent, options: aisdk.routes(agent, path="/api/chat", options=options),
        (
            "/api/chat",
            {"id": "c1", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]}]},
        ),
        ("GET", "/api/chat/c1/stream", None),
    ),
    Protocol(
        "agui",
        lambda agent, options: agui.routes(agent, path="/api/agui", options=options),
        (
            "/api/agui",
            {"threadId": "t1", "runId": "r1", "messages": [{"id": "u", "role": "user", "content": "go"}], "state": {}},
        ),
        ("POST", "/api/agui/reattach", {"threadId": "t1"}),
    ),
    Protocol(
        "dsh",
        lambda agent, options: dsh.routes(agent, path="/api/agent", options=options),
        ("/api/agent/stream", {"agentId": "a1", "message": "go"}),
        ("GET", "/api/agent/a1/stream", None),
    ),
]


def has(word: bytes) -> Callable[[list[Event]], bool]:
    return lambda events: any(word in e.raw for e in events)


def check_resumes_from_every_id(open_resume: Callable[[str], Any], events: list[Event], *, every_frame: bool) -> None:
    """For each event of ``events`` (a stream a client read) that has an id, a resume from it answers exactly the
    events after it."""
    ids = [n for n, e in enumerate(events) if e.id is not None]
    if every_frame:
        assert len(ids) == len(events), [e.raw for e in events if e.id is None]
    assert any("." in (e.id or "") for e in events), "no stored batch held several frames"
    for n in ids:
        rest = events[n + 1 :]
        if not rest:
            continue
        with open_resume(events[n].id or "") as response:
            assert response.status_code == 200
            want = len(rest)
            got = SSEReader(response).until(lambda got, want=want: len(got) >= want)
        assert [e.raw for e in got[: len(rest)]] == [e.raw for e in rest], (n, events[n].id)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.name)
def test_a_resume_from_any_id_seen_gives_each_later_frame_exactly_once(
    live_server: Callable[..., Any], protocol: Protocol
) -> None:
    agent = Bursts()
    app = Starlette(routes=protocol.routes(agent, StreamOptions(resumable=MemoryStore())))
    url = live_server(app).url
    path, body = protocol.post
    method, resume_path, resume_body = protocol.resume
    with httpx.Client(timeout=10) as client:

        @contextmanager
        def open_resume(last: str | None) -> Iterator[httpx.Response]:
            headers = {} if last is None else {"last-event-id": last}
            with client.stream(method, url + resume_path, json=resume_body, headers=headers) as response:
                yield response

        try:
            # The run's own response, read to the end of the first burst, then dropped.
            with client.stream("POST", url + path, json=body) as response:
                first = list(SSEReader(response).until(has(b"b0w11")))
            check_resumes_from_every_id(open_resume, first, every_frame=True)
            # A reader without an id (a reload; on AG-UI, the reattach run), then the second burst.
            with open_resume(None) as response:
                reader = SSEReader(response)
                reader.until(has(b"b0w11"))
                agent.gates[0].set()
                again = list(reader.until(has(b"b1w11")))
            check_resumes_from_every_id(open_resume, again, every_frame=protocol.name != "agui")
            # On AG-UI, the reattach's opening is one unit: only its last frame names where it stands.
            after_opening = [e for e in again if b"b1w" in e.raw]
            assert after_opening and all(e.id is not None for e in after_opening)
        finally:
            for gate in agent.gates:
                gate.set()
