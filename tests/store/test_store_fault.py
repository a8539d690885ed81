"""Redis killed mid-stream: two uvicorn workers on a redis-server of the test's own, SIGKILLed while runs of the
three protocols stream. Every open reader (the POST responses on the producing worker, a resume or reattach
reader on the other) ends with its protocol's terminal error frame within seconds, each run stops with one log
line and no traceback, requests during the outage are a JSON 503, and once Redis is back new runs work."""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

from streamkit.resumable import LOST_TEXT
from streamkit.store.redis import RedisStore
from tests.store.processes import RedisServer, Worker

PACE = 0.2  # a run takes about 7 s: the kill lands in its middle
LEASE = 2.0
ALICE = {"authorization": "Bearer alice"}
ENDED_WITHIN = 6.0  # seconds after the kill (the client's own retries take up to about 4 s)


def events(data: bytes) -> list[tuple[str | None, Any]]:
    """``(event name, payload)`` per SSE event: the payload is parsed JSON, or the raw text (``[DONE]``)."""
    out: list[tuple[str | None, Any]] = []
    for block in data.split(b"\n\n"):
        name = None
        payload = None
        for line in block.split(b"\n"):
            if line.startswith(b"event: "):
                name = line[7:].decode()
            elif line.startswith(b"data: "):
                raw = line[6:]
                payload = raw.decode() if raw == b"[DONE]" else orjson.loads(raw)
        if payload is not None:
            out.append((name, payload))
    return out


class Reader(threading.Thread):
    """One client reading a streamed response to its end in a thread: its status, body, when it ended, and the
    error if the body was cut."""

    def __init__(self, method: str, url: str, marker: bytes, **request: Any) -> None:
        super().__init__(daemon=True)
        self.method, self.url, self.marker, self.request = method, url, marker, request
        self.status = 0
        self.body = b""
        self.error: BaseException | None = None
        self.ended = 0.0
        self.started = threading.Event()
        self.start()

    def run(self) -> None:
        try:
            with httpx.Client(timeout=30) as client, client.stream(self.method, self.url, **self.request) as r:
                self.status = r.status_code
                for chunk in r.iter_raw():
                    self.body += chunk
                    if self.marker in self.body:
                        self.started.set()
        except BaseException as exc:
            self.error = exc
        finally:
            self.ended = time.monotonic()
            self.started.set()


def lines(log: Path, pattern: str) -> list[str]:
    return [line for line in log.read_text().splitlines() if re.search(pattern, line)]


def wait_for(check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_redis_killed_mid_stream_ends_every_reader_and_runs_work_once_it_is_back(tmp_path: Path) -> None:
    redis = RedisServer()
    redis.start()
    prefix = f"f{uuid.uuid4().hex[:10]}"
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    workers: list[Worker] = []
    try:
        with log_a.open("wb") as err_a, log_b.open("wb") as err_b:
            env = {"STREAMKIT_LOG_LEVEL": "INFO"}
            workers.append(Worker(redis.url, prefix, lease=LEASE, pace=PACE, env=env, stderr=err_a))
            workers.append(Worker(redis.url, prefix, lease=LEASE, pace=PACE, env=env, stderr=err_b))
        a, b = workers
        chat = {"id": "c1", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]}]}
        run = {"threadId": "t1", "runId": "r1", "messages": [{"id": "u", "role": "user", "content": "go"}], "state": {}}
        producers = {
            "aisdk": Reader("POST", a.url + "/api/chat", b'"text-delta"', json=chat, headers=ALICE),
            "agui": Reader("POST", a.url + "/api/agui", b"TEXT_MESSAGE_CONTENT", json=run, headers=ALICE),
            "dsh": Reader(
                "POST",
                a.url + "/api/agent/stream",
                b"event: chunk",
                json={"agentId": "d1", "message": "go"},
                headers=ALICE,
            ),
        }
        for reader in producers.values():
            assert reader.started.wait(15) and reader.status == 200, reader.body
        others = {
            "aisdk": Reader("GET", b.url + "/api/chat/c1/stream", b'"text-delta"', headers=ALICE),
            "agui": Reader(
                "POST", b.url + "/api/agui/reattach", b"TEXT_MESSAGE_CONTENT", json={"threadId": "t1"}, headers=ALICE
            ),
            "dsh": Reader("GET", b.url + "/api/agent/d1/stream", b"event: chunk", headers=ALICE),
        }
        for reader in others.values():
            assert reader.started.wait(15) and reader.status == 200, reader.body

        redis.kill()
        killed = time.monotonic()
        readers = [*producers.values(), *others.values()]
        for reader in readers:
            reader.join(20)
        assert not [r for r in readers if r.is_alive()], "a reader never ended"
        for name, group in (("producing worker", producers), ("other worker", others)):
            for protocol, reader in group.items():
                where = f"{protocol} on the {name}"
                assert reader.error is None, (where, reader.error)  # the body ended properly, not cut off
                assert reader.ended - killed < ENDED_WITHIN, (where, reader.ended - killed)
                got = events(reader.body)
                if protocol == "aisdk":
                    assert got[-2:] == [(None, {"type": "error", "errorText": LOST_TEXT}), (None, "[DONE]")], where
                elif protocol == "agui":
                    assert got[-1][1]["type"] == "RUN_ERROR" and got[-1][1]["code"] == "run_lost", where
                    assert [p["type"] for _, p in got].count("RUN_STARTED") == 1, where
                else:
                    assert got[-1] == ("error", {"message": LOST_TEXT, "code": "run_lost"}), where

        # The runs stop (their agents closed) while Redis is away, each with one line in the log.
        wait_for(lambda: len(lines(log_a, r"the run is stopped")) == 3, 15)
        assert len(lines(log_a, r"the stream store failed \(ConnectionError: .*\); the run is stopped")) == 3

        # While Redis is away, what needs it is a JSON 503 (with one line in the log, no traceback).
        with httpx.Client(timeout=30) as client:
            refused = client.post(a.url + "/api/chat", json={**chat, "id": "c-down"}, headers=ALICE)
            assert refused.status_code == 503 and refused.json()["error"]["field"] == "resumable"
            assert client.get(b.url + "/api/chat/c1/stream", headers=ALICE).status_code == 503

        redis.start()  # back, on the same port, empty (no persistence)
        with httpx.Client(timeout=30) as client:
            assert client.get(b.url + "/api/chat/c1/stream", headers=ALICE).status_code == 204  # the store lost it
            again = Reader("POST", a.url + "/api/chat", b'"text-delta"', json={**chat, "id": "c2"}, headers=ALICE)
            assert again.started.wait(15) and again.status == 200, again.body
            follow = Reader("GET", b.url + "/api/chat/c2/stream", b'"text-delta"', headers=ALICE)
            assert follow.started.wait(15) and follow.status == 200, follow.body
            assert client.delete(b.url + "/api/chat/c2/stream", headers=ALICE).status_code == 204
            for reader in (again, follow):
                reader.join(15)
                tail = [p for _, p in events(reader.body)][-2:]
                assert reader.error is None and tail[0]["type"] == "abort" and tail[1] == "[DONE]"
            dialect = client.post(a.url + "/api/agent/stream", json={"agentId": "d2", "message": "go"}, headers=ALICE)
            why = (dialect.text[:300], log_a.read_text().splitlines()[-5:])  # what the worker said, should it fail
            assert dialect.status_code == 200 and events(dialect.content)[-1][0] == "done", why
    finally:
        for worker in workers:
            worker.stop()
        redis.stop()

    for log in (log_a, log_b):
        assert not lines(log, r"Traceback|Exception in ASGI"), log.read_text()
    # One line per run on the worker producing them, naming the run and what happened to it.
    assert len(lines(log_a, r"the run is stopped")) == 3, log_a.read_text()
    assert not lines(log_b, r"the run is stopped")
    assert len(lines(log_a, r"cancel subscription was lost")) == 1  # per worker, not per retry


async def test_connections_broken_by_a_restart_are_replaced_not_failed() -> None:
    """After Redis restarts, every connection the store's pool kept is broken: each command that meets one is sent
    again on a new connection, so no request fails for it."""
    redis = RedisServer()
    redis.start()
    store = RedisStore.from_url(redis.url, prefix=f"restart{uuid.uuid4().hex[:8]}")
    try:
        # Eight connections in the pool: eight commands in flight at once.
        assert await asyncio.gather(*(store.active(f"chat-{i}") for i in range(8))) == [None] * 8
        redis.kill()
        redis.start()  # back on the same port: the pooled connections are all broken
        assert await asyncio.gather(*(store.active(f"chat-{i}") for i in range(8))) == [None] * 8
        assert await store.create("r1", owner="o", chat=None, meta=None)
        assert (await store.info("r1")) is not None
    finally:
        await store.aclose()
        redis.stop()
