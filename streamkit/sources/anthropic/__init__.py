"""Anthropic Messages: the history in, the Messages stream out, and an agent over ``AsyncAnthropic``.

The three parts every source has, each in its own module (:mod:`.messages`, :mod:`.translator`,
:mod:`.agent`, and :mod:`._common` for what they share); import from here:

1. **Input**: :func:`to_anthropic_request` turns a :class:`~streamkit.events.RunInput` into the Messages
   API's ``system``, ``messages`` and ``tools`` (:func:`to_anthropic_messages`, :func:`to_anthropic_tools`
   for the pieces). Reasoning goes back as ``thinking`` blocks with the ``signature`` the stream gave
   (restored from the part's provider metadata, or from the AG-UI ``encryptedValue``), redacted thinking as
   ``redacted_thinking``: Anthropic rejects a tool-use continuation whose thinking lost its signature.
   Tools Anthropic ran itself go back as their ``server_tool_use`` block with its ``*_tool_result`` block
   right after it, in the same assistant turn.
2. **Stream translation**: :class:`AnthropicTranslator` is the pure state machine (one raw stream event in,
   ``ChatEvent``\\ s out); :func:`anthropic_events` wraps it into a well-formed run. It reads the ``anthropic``
   SDK's raw events (``client.messages.create(..., stream=True)``) or the same events as plain dicts.
3. **An agent**: :class:`AnthropicAgent` runs the model over your ``AsyncAnthropic`` client with the
   client's frontend tools and your server tools, through the shared tool loop
   (:func:`streamkit.sources.loop.run_tool_loop`).

To splice one Messages stream into a longer run of your own, use
:func:`streamkit.sources.loop.stream_step` with an :class:`AnthropicTranslator` instead of
:func:`anthropic_events`, then read the translator's ``error``, ``finish`` and ``usage``.

**Usage** is the SDK's top-level ``usage`` counts, as its final message reports them (``input_tokens``
counting the cache reads and writes too, which are also given apart). After context compaction the stream's
``usage`` carries an ``iterations`` list (the compaction pass, then the message); the counts stay the
top-level ones, the message after compaction, without the compaction pass's own tokens: read
``usage.iterations`` from the raw events to account for those.

The ``anthropic`` package is needed for :class:`AnthropicAgent` only (``pip install 'streamkit[anthropic]'``).
"""

from __future__ import annotations

from ._common import REDACTED_PREFIX
from .agent import AnthropicAgent
from .messages import to_anthropic_messages, to_anthropic_request, to_anthropic_system, to_anthropic_tools
from .translator import AnthropicTranslator, anthropic_events

__all__ = [
    "REDACTED_PREFIX",
    "AnthropicAgent",
    "AnthropicTranslator",
    "anthropic_events",
    "message_events",
    "to_anthropic_messages",
    "to_anthropic_request",
    "to_anthropic_system",
    "to_anthropic_tools",
]

message_events = anthropic_events
"""The earlier name of :func:`anthropic_events`."""
