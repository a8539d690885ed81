"""The neutral input side: what an agent core receives, whatever protocol the request came in.

Both protocol adapters turn their request body into a :class:`RunInput`; an :class:`Agent` turns a
``RunInput`` into an async iterator of :data:`~streamkit.events.ChatEvent`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Annotated, Any, Literal, Protocol, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from .models import ChatEvent, ProviderMetadata

__all__ = [
    "Agent",
    "ApprovalState",
    "ContextItem",
    "FilePart",
    "Message",
    "Part",
    "ReasoningPart",
    "ResumeEntry",
    "Role",
    "RunInput",
    "TextPart",
    "Tool",
    "ToolCallPart",
    "ToolResultPart",
    "last_user_text",
]

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_post_init(self, context: Any, /) -> None:
        # A run holds its input, every message and part of the conversation, for as long as it streams, and
        # pydantic gives each model a set of the names of its fields that were given (a few hundred bytes
        # each). The models are frozen, so no set is ever changed in place (a copy gets a copy of its own):
        # models given the same fields share one set.
        given = self.__pydantic_fields_set__
        shared = _GIVEN.setdefault(frozenset(given), given)
        if shared is not given:
            object.__setattr__(self, "__pydantic_fields_set__", shared)


_GIVEN: dict[frozenset[str], set[str]] = {}
"""One set of given field names for each combination that occurs (a subset of some input model's fields)."""


class TextPart(_Model):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class FilePart(_Model):
    """A file by URL (often a ``data:`` URL) with its media type."""

    type: Literal["file"] = "file"
    url: str
    media_type: str
    filename: str | None = None


class ReasoningPart(_Model):
    """Reasoning text the assistant produced earlier.

    ``provider_metadata`` and ``encrypted_value`` carry what the provider attached to the reasoning (an
    Anthropic thinking signature, redacted thinking, an encrypted reasoning item) as the client sent it back:
    the AI SDK keeps the ``providerMetadata`` of a reasoning part, AG-UI the ``encryptedValue`` of a
    reasoning message. A source restores them when it sends the history to its provider again.
    """

    type: Literal["reasoning"] = "reasoning"
    text: str
    provider_metadata: dict[str, dict[str, Any]] | None = None
    encrypted_value: str | None = None


class ApprovalState(_Model):
    """The approval asked for a tool call, and the user's answer once given (``approved`` is None before)."""

    id: str
    approved: bool | None = None
    reason: str | None = None


class ToolCallPart(_Model):
    """A tool call the assistant made: ``input`` is the parsed input (raw text when it did not parse).

    ``provider_executed`` marks a tool the model provider ran itself (a web search, code execution): its
    result belongs to the provider's own turn, not to a tool message. ``provider_metadata`` is what the
    provider attached to the call (the kind of block or item it came as), as the client sent it back.
    """

    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    input: Any = None
    approval: ApprovalState | None = None
    dynamic: bool = False
    provider_executed: bool = False
    provider_metadata: ProviderMetadata | None = None


class ToolResultPart(_Model):
    """The outcome of the tool call ``id``: ``output``, or ``error`` text, or ``denied``.

    ``provider_metadata`` is what the provider attached to the result (the result block's kind, the
    provider's own error content), as the client sent it back."""

    type: Literal["tool-result"] = "tool-result"
    id: str
    name: str | None = None
    output: Any = None
    error: str | None = None
    denied: bool = False
    provider_metadata: ProviderMetadata | None = None


Part: TypeAlias = Annotated[
    TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart, Field(discriminator="type")
]


class Message(_Model):
    """One message of the conversation, in protocol-neutral form."""

    id: str
    role: Role
    parts: list[Part] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The concatenated text of the message's text parts."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


class Tool(_Model):
    """A tool the client can execute (a frontend tool); the agent may call it and leave it pending."""

    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None


class ContextItem(_Model):
    """An ambient piece of context from the client."""

    description: str
    value: str


class ResumeEntry(_Model):
    """The client's answer to an interrupt that ended the previous run."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None

    def wire(self) -> dict[str, Any]:
        """The entry as both protocols' requests carry it: ``{"interruptId", "status", "payload"?}``."""
        item: dict[str, Any] = {"interruptId": self.interrupt_id, "status": self.status}
        if self.payload is not None:
            item["payload"] = self.payload
        return item


class RunInput(_Model):
    """Everything an agent core needs for one run.

    ``message_id`` is set when the run continues an existing assistant message (its id is then kept).
    ``principal`` is what the route's ``authorize`` hook returned. ``extra`` holds protocol-specific keys
    the request carried that have no neutral meaning (app keys of a ``useChat`` body, for instance).
    """

    thread_id: str
    run_id: str
    messages: list[Message] = Field(default_factory=list)
    state: Any = None
    tools: list[Tool] = Field(default_factory=list)
    context: list[ContextItem] = Field(default_factory=list)
    forwarded_props: Any = None
    resume: list[ResumeEntry] = Field(default_factory=list)
    message_id: str | None = None
    parent_run_id: str | None = None
    principal: Any = None
    extra: dict[str, Any] = Field(default_factory=dict)


class Agent(Protocol):
    """An agent core: called with a :class:`RunInput`, returns an async iterator of ``ChatEvent``.

    An ``async def`` generator function is the usual form::

        async def agent(run: RunInput) -> AsyncIterator[ChatEvent]:
            yield TextStart(id="t1")
            ...
    """

    def __call__(self, run: RunInput, /) -> AsyncIterable[ChatEvent]: ...


AgentFunction: TypeAlias = Callable[[RunInput], AsyncIterator[ChatEvent]]


def last_user_text(run: RunInput) -> str:
    """The text of the last user message of ``run`` (empty when there is none)."""
    for message in reversed(run.messages):
        if message.role == "user":
            return message.text
    return ""
