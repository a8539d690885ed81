"""The dialect's request: ``{"agentId", "message"}`` plus optional ``channelCode``, ``maxTokens``, ``cwd``.

:func:`parse_agent_request` validates a decoded JSON body (a JSON 4xx naming the field otherwise:
``agentId``, ``message``, ``maxTokens``...); :func:`to_run_input` makes it a :class:`~streamkit.events.RunInput`
whose thread is the agent id and whose messages are the conversation so far (the server keeps it per agent id,
see :class:`~streamkit.dsh.sessions.Sessions`) followed by the user's message. ``channelCode``, ``maxTokens``
and ``cwd`` have no neutral meaning: they reach the agent in ``RunInput.extra`` under those names, with any
other key of the body.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ..events import Message, RunInput, TextPart
from ..http import HTTPError, Limits, validation_error

__all__ = ["AgentRequest", "parse_agent_request", "to_run_input"]

MAX_AGENT_ID = 256
"""The longest agent id accepted (characters)."""


class AgentRequest(BaseModel):
    """The body of ``POST /api/agent/stream`` and ``POST /api/agent/message`` (camelCase on the wire)."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True, frozen=True)

    agent_id: str = Field(min_length=1, max_length=MAX_AGENT_ID, pattern=r"^[^\x00-\x1f/]+$")
    message: str = Field(min_length=1)
    channel_code: str | None = None
    max_tokens: int | None = Field(default=None, ge=1, strict=True)
    cwd: str | None = None


def parse_agent_request(data: Any, limits: Limits | None = None) -> AgentRequest:
    """Validate a decoded JSON body as an :class:`AgentRequest`, or raise :class:`~streamkit.http.HTTPError`.

    422 naming the field for a missing or wrong one (``agentId``, ``message``...); with ``limits``, a
    ``message`` over ``max_message_bytes`` is a 413 naming ``limits.max_message_bytes``.
    """
    if not isinstance(data, dict):
        raise HTTPError("body: expected a JSON object with agentId and message", field="body", status=422)
    try:
        body = AgentRequest.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None
    if limits is not None:
        size = len(body.message.encode())
        if size > limits.max_message_bytes:
            raise HTTPError(
                f"message: {size} bytes exceed the limit of {limits.max_message_bytes}",
                field="limits.max_message_bytes",
                status=413,
            )
    return body


def to_run_input(
    body: AgentRequest,
    *,
    history: Iterable[Message] = (),
    principal: Any = None,
    run_id: str | None = None,
) -> RunInput:
    """The neutral :class:`RunInput` for a request: the agent id as the thread, ``history`` then the message."""
    run = run_id or uuid.uuid4().hex
    extra: dict[str, Any] = {}
    for name in ("channel_code", "max_tokens", "cwd"):
        value = getattr(body, name)
        if value is not None:
            extra[to_camel(name)] = value
    extra.update(body.model_extra or {})
    user = Message(id=f"{run}-0", role="user", parts=[TextPart(text=body.message)])
    return RunInput(
        thread_id=body.agent_id,
        run_id=run,
        messages=[*history, user],
        principal=principal,
        extra=extra,
    )
