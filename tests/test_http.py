"""The shared HTTP edge: bounded JSON bodies, JSON 4xx errors naming the field, the authorize hook."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from streamkit.http import Forbidden, HTTPError, Limits, Unauthorized, authorize_request, read_json, validation_error


class Body(BaseModel):
    id: str
    messages: list[dict[str, Any]]


class Client:
    """A synchronous client over httpx's ASGI transport (no network)."""

    def __init__(self, app: Any) -> None:
        self.transport = httpx.ASGITransport(app=app)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            async with httpx.AsyncClient(transport=self.transport, base_url="http://test") as client:
                return await client.post(url, **kwargs)

        return anyio.run(go)


def make_client(limits: Limits = Limits(), authorize: Any = None) -> Client:
    async def endpoint(request: Request) -> Response:
        try:
            principal = await authorize_request(authorize, request)
            data = await read_json(request, limits)
            try:
                body = Body.model_validate(data)
            except ValidationError as exc:
                raise validation_error(exc) from None
        except HTTPError as err:
            return err.response()
        return JSONResponse({"id": body.id, "principal": principal})

    return Client(Starlette(routes=[Route("/x", endpoint, methods=["POST"])]))


def test_a_json_media_type_passes_and_the_first_content_type_counts() -> None:
    body = b'{"id": "c1", "messages": []}'
    client = make_client()
    for ctype in ("application/json; charset=utf-8", "application/vnd.api+json", "APPLICATION/JSON"):
        assert client.post("/x", content=body, headers={"content-type": ctype}).status_code == 200
    assert client.post("/x", content=body, headers=[("content-type", "application/json")] * 2).status_code == 200
    twice = [("content-type", "text/plain"), ("content-type", "application/json")]
    assert client.post("/x", content=body, headers=twice).status_code == 415


def test_valid_body_passes() -> None:
    response = make_client().post("/x", json={"id": "c1", "messages": []})
    assert response.json() == {"id": "c1", "principal": None}


@pytest.mark.parametrize(
    ("content", "headers", "status", "field"),
    [
        (b"", {"content-type": "application/json"}, 400, "body"),
        (b"{not json", {"content-type": "application/json"}, 400, "body"),
        (b"\xff\xfe{}", {"content-type": "application/json"}, 400, "body"),
        (b"{}", {"content-type": "text/plain"}, 415, "content-type"),
        (b"{}", {"content-type": "Text/Plain; charset=utf-8"}, 415, "content-type"),
        (b"{}", {"content-type": "application/json", "content-length": "x"}, 400, "content-length"),
        (b"{}", {"content-type": "application/json", "content-length": "99999999999"}, 413, "limits.max_body_bytes"),
        (b'{"id": 5, "messages": []}', {"content-type": "application/json"}, 422, "id"),
        (b'{"id": "x", "messages": [1]}', {"content-type": "application/json"}, 422, "messages.0"),
        (b"[" * 100 + b"]" * 100, {"content-type": "application/json"}, 400, "limits.max_json_depth"),
        (b"[" * 100_000 + b"]" * 100_000, {"content-type": "application/json"}, 400, "limits.max_json_depth"),
    ],
)
def test_bad_bodies_get_a_json_4xx_naming_the_field(
    content: bytes, headers: dict[str, str], status: int, field: str
) -> None:
    response = make_client().post("/x", content=content, headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["status"] == status
    assert error["field"] == field
    assert error["message"]


def test_body_size_limit_is_413_naming_the_limit() -> None:
    client = make_client(Limits(max_body_bytes=100))
    response = client.post("/x", json={"id": "x" * 200, "messages": []})
    assert response.status_code == 413
    assert response.json()["error"]["field"] == "limits.max_body_bytes"

    async def chunks() -> Any:  # no content-length: the limit holds while reading
        yield b'{"id": "'
        yield b"x" * 500
        yield b'", "messages": []}'

    response = client.post("/x", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413


@pytest.mark.parametrize(
    ("hook", "status"),
    [
        (lambda request: (_ for _ in ()).throw(Unauthorized("no token")), 401),
        (lambda request: (_ for _ in ()).throw(Forbidden("not yours")), 403),
        (lambda request: (_ for _ in ()).throw(HTTPException(401, "bad token")), 401),
        (lambda request: (_ for _ in ()).throw(PermissionError("nope")), 403),
    ],
)
def test_authorize_refusals_are_json(hook: Any, status: int) -> None:
    response = make_client(authorize=hook).post("/x", json={"id": "c", "messages": []})
    assert response.status_code == status
    assert response.json()["error"]["field"] == "authorization"


def test_authorize_principal_sync_and_async() -> None:
    async def hook(request: Request) -> str:
        return request.headers.get("x-user", "")

    response = make_client(authorize=hook).post("/x", json={"id": "c", "messages": []}, headers={"x-user": "ann"})
    assert response.json()["principal"] == "ann"
    response = make_client(authorize=lambda r: {"sub": 1}).post("/x", json={"id": "c", "messages": []})
    assert response.json()["principal"] == {"sub": 1}


def test_every_invalid_field_is_listed_with_its_path() -> None:
    response = make_client().post("/x", json={"messages": [1, {}, "x"]})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == "id" and error["message"] == "id: Field required (and 2 more)"  # as before
    assert error["errors"] == [
        {"field": "id", "message": "Field required"},
        {"field": "messages.0", "message": "Input should be a valid dictionary"},
        {"field": "messages.2", "message": "Input should be a valid dictionary"},
    ]


def test_the_list_of_invalid_fields_is_bounded() -> None:
    from streamkit.http import MAX_FIELD_ERRORS

    response = make_client().post("/x", json={"id": "c", "messages": list(range(100))})
    error = response.json()["error"]
    assert len(error["errors"]) == MAX_FIELD_ERRORS
    assert error["errors"][0] == {"field": "messages.0", "message": "Input should be a valid dictionary"}
    assert error["message"] == "messages.0: Input should be a valid dictionary (and 99 more)"


def _threads_seen(size: int) -> tuple[str, str]:
    """The thread the parse of a body of about ``size`` bytes ran in, and the event loop's thread."""
    import threading

    from streamkit.http import parse_request

    seen: list[str] = []

    async def endpoint(request: Request) -> Response:
        seen.append(threading.current_thread().name)

        def parse(data: Any, limits: Limits) -> Any:
            seen.append(threading.current_thread().name)
            return data

        _, body = await parse_request(request, Limits(), None, parse)
        return JSONResponse({"n": len(body["pad"])})

    client = Client(Starlette(routes=[Route("/x", endpoint, methods=["POST"])]))
    response = client.post("/x", json={"pad": "x" * size})
    assert response.json() == {"n": size}
    return seen[0], seen[1]


def test_a_large_body_is_parsed_in_a_worker_thread_a_small_one_on_the_loop() -> None:
    from streamkit.http import OFFLOAD_BODY_BYTES

    loop, parsed = _threads_seen(OFFLOAD_BODY_BYTES)
    assert parsed != loop
    loop, parsed = _threads_seen(100)
    assert parsed == loop


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"a\\ud800b"', "a\ufffdb"),
        ('"\\udc00"', "\ufffd"),
        ('"\\ud800\\ud800"', "\ufffd\ufffd"),
        ('"\\ud83d\\ude00"', "\U0001f600"),
        ('"\\\\ud800"', "\\ud800"),
        ('{"\\ud800": ["\\uDBFF"]}', {"\ufffd": ["\ufffd"]}),
    ],
)
def test_a_lone_surrogate_reads_as_the_replacement_character(text: str, value: Any) -> None:
    from streamkit.http import json_value

    assert json_value(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "[12345678901234567890123, -9223372036854775809, 18446744073709551616, 9223372036854775807, -0]",
        '{"a": 1, "a": [0.1, -0.0, 5e-324, 1.7976931348623157e308, 1E2, 123456789012345678]}',
        "[1e400, -1e400, NaN, Infinity, -Infinity]",
        r'["\u00e9", "\u00e9\u2028", "\ud83d\ude00", "\ud800", "\\ud800"]',
        '{"x": "12345678901234567890123"}',
    ],
)
def test_json_reads_as_the_standard_library_reads_it(text: str) -> None:
    # Whichever parser reads it: integers past 64 bits stay exact, the standard library's extensions stay.
    import json

    from streamkit.http import json_value

    expected = json.loads(text.replace(r'"\ud800"', r'"\ufffd"'))
    assert repr(json_value(text)) == repr(expected)


def test_text_that_is_not_json_is_refused_with_the_standard_library_message() -> None:
    import json

    from streamkit.http import json_value

    for text in ("[1,]", '{"a" 1}', "01", "\ufeff{}", r'"\x41"'):
        with pytest.raises(ValueError) as caught:
            json_value(text)
        with pytest.raises(ValueError) as stdlib:
            json.loads(text)
        assert str(caught.value) == str(stdlib.value)


def test_json_strings_obey_the_depth_limit_naming_their_field() -> None:
    from streamkit.http import check_json, parse_json

    limits = Limits(max_json_depth=3)
    assert parse_json("[[[1]]]", limits, "f") == [[[1]]]
    check_json("not json [[[[", limits, "f")  # not JSON: the caller keeps it as text
    for deep in ("[[[[1]]]]", "[" * 100_000 + "]" * 100_000):
        with pytest.raises(HTTPError) as caught:
            check_json(deep, limits, "a.b")
        assert (caught.value.status, caught.value.field) == (400, "a.b")
        assert "limits.max_json_depth" in caught.value.message


def test_a_body_not_received_in_time_is_a_408() -> None:
    async def go() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        calls = 0

        async def receive() -> dict[str, Any]:
            nonlocal calls
            calls += 1
            if calls > 1:
                await anyio.sleep(0.1)
            return {"type": "http.request", "body": b"{", "more_body": True}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        async def endpoint(request: Request) -> Response:
            try:
                await read_json(request, Limits(body_timeout=0.25))
            except HTTPError as err:
                return err.response()
            return Response(status_code=204)

        app = Starlette(routes=[Route("/x", endpoint, methods=["POST"])])
        scope = {"type": "http", "method": "POST", "path": "/x", "headers": [], "query_string": b""}
        with anyio.fail_after(5):
            await app(scope, receive, send)
        return sent

    sent = anyio.run(go)
    assert sent[0]["status"] == 408
    assert b'"field":"limits.body_timeout"' in sent[1]["body"]


def _body_request(receive: Any) -> Request:
    scope = {"type": "http", "method": "POST", "path": "/x", "headers": [], "query_string": b""}
    return Request(scope, receive)


def _trickle(chunks: list[bytes], pause: float) -> Any:
    """A ``receive`` handing over ``chunks`` (the last one ends the body), ``pause`` seconds before each after the
    first."""
    sent = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await anyio.sleep(pause)
        sent += 1
        return {"type": "http.request", "body": chunks[sent - 1], "more_body": sent < len(chunks)}

    return receive


@pytest.mark.parametrize("on_asyncio", [True, False], ids=["asyncio-timeout", "anyio-cancel-scope"])
def test_the_body_timeout_holds_with_either_timer(monkeypatch: pytest.MonkeyPatch, on_asyncio: bool) -> None:
    # The asyncio timer, and the anyio cancel scope other backends (trio) get: a body in time is read whole, a
    # trickling one is a 408, and a body already read (by the authorize hook, say) is read again.
    from streamkit import http

    monkeypatch.setattr(http, "on_asyncio", lambda: on_asyncio)

    async def go() -> None:
        chunks = [b'{"a": ', b"[1, 2", b"]}"]
        assert await read_json(_body_request(_trickle(chunks, 0.01)), Limits(body_timeout=5)) == {"a": [1, 2]}
        with pytest.raises(HTTPError) as caught:
            await read_json(_body_request(_trickle([b"{", b" ", b"}"], 0.2)), Limits(body_timeout=0.25))
        assert (caught.value.status, caught.value.field) == (408, "limits.body_timeout")
        request = _body_request(_trickle([b'{"b": 1}'], 0))
        assert await request.body() == b'{"b": 1}'
        assert await read_json(request, Limits(body_timeout=5)) == {"b": 1}
        with pytest.raises(HTTPError) as caught:
            await read_json(request, Limits(max_body_bytes=4))
        assert (caught.value.status, caught.value.field) == (413, "limits.max_body_bytes")

    anyio.run(go)


@pytest.mark.parametrize("on_asyncio", [True, False], ids=["asyncio-timeout", "anyio-cancel-scope"])
def test_a_cancel_from_outside_the_body_read_is_not_a_408(monkeypatch: pytest.MonkeyPatch, on_asyncio: bool) -> None:
    from streamkit import http

    monkeypatch.setattr(http, "on_asyncio", lambda: on_asyncio)

    async def go() -> None:
        with anyio.move_on_after(0.1) as scope:
            await read_json(_body_request(_trickle([b"{", b"}"], 10)), Limits(body_timeout=5))
        assert scope.cancelled_caught
        # The scope's cancel was taken back: the task is not left cancelling.
        await anyio.sleep(0)

    anyio.run(go)


def test_a_client_gone_while_sending_the_body_is_a_400() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def go() -> None:
        with pytest.raises(HTTPError) as caught:
            await read_json(_body_request(receive), Limits())
        assert (caught.value.status, caught.value.field) == (400, "body")

    anyio.run(go)


@pytest.mark.parametrize("protocol", ["aisdk", "agui"])
def test_validation_message_by_message_names_the_fields_one_call_names(protocol: str) -> None:
    from streamkit.agui.request import RunAgentInput
    from streamkit.aisdk.request import ChatRequest
    from streamkit.http import validate_listed
    from streamkit.offload import run_offloaded

    model: type[BaseModel]
    if protocol == "aisdk":
        model = ChatRequest
        data: dict[str, Any] = {
            "messages": [
                {"id": "a", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
                {"id": "b", "role": "robot", "parts": [{"type": "text"}]},
                {"id": 3, "role": "user", "parts": [{"type": "hologram"}]},
            ],
            "trigger": "later",
        }
    else:
        model = RunAgentInput
        data = {
            "threadId": "t",
            "messages": [
                {"id": "a", "role": "user", "content": "hi"},
                {"id": "b", "role": "user"},
                {"id": "c", "role": "tool", "content": "x"},
            ],
            "tools": [{"description": 1}],
        }
    with pytest.raises(ValidationError) as once:
        model.model_validate(data)
    with pytest.raises(ValidationError) as listed:
        run_offloaded(validate_listed, model, data)
    strip = [(e["loc"], e["msg"]) for e in once.value.errors()]
    assert [(e["loc"], e["msg"]) for e in listed.value.errors()] == strip
    valid = {**data, "messages": data["messages"][:1]}
    valid = {k: v for k, v in valid.items() if k not in ("trigger", "tools")}
    valid.setdefault("id", "c")
    valid.setdefault("runId", "r")
    if protocol == "aisdk":
        valid.pop("runId")
    else:
        valid.pop("id")
    assert run_offloaded(validate_listed, model, valid) == model.model_validate(valid)
