"""OpenAI as a source: Chat Completions and the Responses API, streamed as ``ChatEvent``\\ s.

The package face: each API lives in its own module (:mod:`.chat`; :mod:`.responses_input` and
:mod:`.responses` for the Responses API's input and its translator and agent; :mod:`._common` for what they
share); import from here. Three parts per API, as every provider source:

- **input**: :func:`to_openai_chat_messages` / :func:`to_openai_chat_tools` turn a ``RunInput`` into Chat
  Completions ``messages`` and ``tools``; :func:`to_openai_responses_messages` /
  :func:`to_openai_responses_tools` into Responses ``input`` items and ``tools``. History stays causal
  (:mod:`streamkit.sources.history`): an assistant message that continued after tool results (the AI SDK
  keeps a multi-step turn in one message) is split so each call is directly followed by its result; a call
  without a recorded result gets a placeholder answer, since both APIs reject an unanswered call. Responses
  reasoning items come back with their ``encrypted_content`` (kept as provider metadata).
- **translators**: :class:`OpenAIChatTranslator` (``chat.completion.chunk`` in) and
  :class:`OpenAIResponsesTranslator` (Responses streaming events in), wrapped by :func:`openai_chat_events`
  and :func:`openai_responses_events`, which yield a well-formed run on their own (``RunStarted`` ...
  ``RunFinished``/``RunError``). They take the ``openai`` SDK's objects (``ChatCompletionChunk``,
  ``ResponseStreamEvent``) or the same as plain dicts, from an async or a sync iterable::

      stream = await client.chat.completions.create(model=..., messages=..., stream=True,
                                                    stream_options={"include_usage": True})
      return openai_chat_events(stream)   # an Agent can return this as its stream

  To splice one call into a longer run, use :func:`streamkit.sources.loop.stream_step` with a translator.
- **agents**: :class:`OpenAIChatAgent` (an ``AsyncOpenAI`` client, or any OpenAI-compatible base URL over
  plain httpx, no SDK needed) and :class:`OpenAIResponsesAgent` (an ``AsyncOpenAI`` client), both on the
  shared tool loop (:func:`streamkit.sources.loop.run_tool_loop`).

The names before the sources shared one vocabulary stay importable: ``chat_events``, ``chat_messages``,
``chat_tools``, ``ChatTranslator``, ``responses_events``, ``responses_input``, ``responses_tools``,
``ResponsesTranslator``.

What the provider's fields become: see the README's table (Sources / OpenAI). The ``openai`` SDK is the
optional extra ``streamkit[openai]``: this package imports without it (dict chunks and the httpx agent need
no SDK); making an SDK client without it raises an ImportError naming the extra.
"""

from __future__ import annotations

from ._common import PROVIDER, HTTPStatusError, provider_error, system_text
from .chat import (
    OpenAIChatAgent,
    OpenAIChatTranslator,
    chat_usage,
    openai_chat_events,
    to_openai_chat_messages,
    to_openai_chat_tools,
)
from .responses import (
    OpenAIResponsesAgent,
    OpenAIResponsesTranslator,
    openai_responses_events,
    responses_usage,
)
from .responses_input import to_openai_responses_messages, to_openai_responses_tools

__all__ = [
    "PROVIDER",
    "ChatTranslator",
    "HTTPStatusError",
    "OpenAIChatAgent",
    "OpenAIChatTranslator",
    "OpenAIResponsesAgent",
    "OpenAIResponsesTranslator",
    "ResponsesTranslator",
    "chat_events",
    "chat_messages",
    "chat_tools",
    "chat_usage",
    "openai_chat_events",
    "openai_responses_events",
    "provider_error",
    "responses_events",
    "responses_input",
    "responses_tools",
    "responses_usage",
    "system_text",
    "to_openai_chat_messages",
    "to_openai_chat_tools",
    "to_openai_responses_messages",
    "to_openai_responses_tools",
]

ChatTranslator = OpenAIChatTranslator
"""The earlier name of :class:`OpenAIChatTranslator`."""
chat_events = openai_chat_events
"""The earlier name of :func:`openai_chat_events`."""
chat_messages = to_openai_chat_messages
"""The earlier name of :func:`to_openai_chat_messages`."""
chat_tools = to_openai_chat_tools
"""The earlier name of :func:`to_openai_chat_tools`."""
ResponsesTranslator = OpenAIResponsesTranslator
"""The earlier name of :class:`OpenAIResponsesTranslator`."""
responses_events = openai_responses_events
"""The earlier name of :func:`openai_responses_events`."""
responses_input = to_openai_responses_messages
"""The earlier name of :func:`to_openai_responses_messages`."""
responses_tools = to_openai_responses_tools
"""The earlier name of :func:`to_openai_responses_tools`."""
