"""The wire schemas the real clients validate against, per client version (read from their packages).

``AISDK_CHUNKS[major][chunk type]`` and ``AGUI_EVENTS[generation][event type]`` map each field to a
:class:`Field` (required, kind): ``kind`` is ``string``, ``boolean``, ``number``, ``array``, ``object``, ``any``
(any JSON, ``null`` included), ``enum:a,b`` or ``literal:<value>``. The AI SDK tables are the
``uiMessageChunkSchema`` of ``ai`` 5.0.277, 6.0.326 and 7.0.173 (``data-*`` stands for every data chunk); the
AG-UI tables the ``EventSchemas`` of ``@ag-ui/core`` 0.0.x (as ``@ag-ui/client`` 0.0.59 ships it) and 1.0.0,
every AG-UI event also having the base fields of :data:`AGUI_BASE`. Both clients accept unknown fields (the AI
SDK keeps and ignores them, AG-UI removes them); an optional field may be absent, never ``null``.

The tables are written compactly, one string per type: ``name`` (a string field), ``name!`` (required),
``name:kind``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "AGUI_BASE",
    "AGUI_EVENTS",
    "AGUI_NULL_TOLERATED",
    "AISDK_CHUNKS",
    "AISDK_CITATION",
    "AISDK_CITED_SOURCES",
    "Field",
    "field_spec",
]


class Field(NamedTuple):
    """One field of a chunk or event schema."""

    required: bool
    kind: str


def field_spec(spec: str) -> dict[str, Field]:
    """The fields a compact spec string names (``"id! delta! providerMetadata:object"``)."""
    fields: dict[str, Field] = {}
    for item in spec.split():
        name, _, kind = item.partition(":")
        required = name.endswith("!")
        fields[name.rstrip("!")] = Field(required, kind or "string")
    return fields


_AISDK: dict[int, dict[str, str]] = {
    5: {
        "text-start": "id! providerMetadata:object",
        "text-delta": "id! delta! providerMetadata:object",
        "text-end": "id! providerMetadata:object",
        "error": "errorText!",
        "tool-input-start": "toolCallId! toolName! providerExecuted:boolean dynamic:boolean",
        "tool-input-delta": "toolCallId! inputTextDelta!",
        "tool-input-available": (
            "toolCallId! toolName! input!:any providerExecuted:boolean providerMetadata:object dynamic:boolean"
        ),
        "tool-input-error": (
            "toolCallId! toolName! input!:any providerExecuted:boolean providerMetadata:object dynamic:boolean "
            "errorText!"
        ),
        "tool-output-available": (
            "toolCallId! output!:any providerExecuted:boolean dynamic:boolean preliminary:boolean"
        ),
        "tool-output-error": "toolCallId! errorText! providerExecuted:boolean dynamic:boolean",
        "reasoning-start": "id! providerMetadata:object",
        "reasoning-delta": "id! delta! providerMetadata:object",
        "reasoning-end": "id! providerMetadata:object",
        "source-url": "sourceId! url! title providerMetadata:object",
        "source-document": "sourceId! mediaType! title! filename providerMetadata:object",
        "file": "url! mediaType! providerMetadata:object",
        "data-*": "id data!:any transient:boolean",
        "start-step": "",
        "finish-step": "",
        "start": "messageId messageMetadata:any",
        "finish": "finishReason:enum:stop,length,content-filter,tool-calls,error,other,unknown messageMetadata:any",
        "abort": "",
        "message-metadata": "messageMetadata!:any",
    },
    6: {
        "text-start": "id! providerMetadata:object",
        "text-delta": "id! delta! providerMetadata:object",
        "text-end": "id! providerMetadata:object",
        "error": "errorText!",
        "tool-input-start": (
            "toolCallId! toolName! inputEncoding:enum:json,text providerExecuted:boolean providerMetadata:object "
            "toolMetadata:object dynamic:boolean title"
        ),
        "tool-input-delta": "toolCallId! inputTextDelta!",
        "tool-input-available": (
            "toolCallId! toolName! input!:any providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean title"
        ),
        "tool-input-error": (
            "toolCallId! toolName! input!:any providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean errorText! title"
        ),
        "tool-approval-request": "approvalId! toolCallId! approvalDescriptor:any inputSchemaInput:any signature",
        "tool-output-available": (
            "toolCallId! output!:any providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean preliminary:boolean"
        ),
        "tool-output-error": (
            "toolCallId! errorText! providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean"
        ),
        "tool-output-denied": "toolCallId!",
        "reasoning-start": "id! providerMetadata:object",
        "reasoning-delta": "id! delta! providerMetadata:object",
        "reasoning-end": "id! providerMetadata:object",
        "source-url": "sourceId! url! title providerMetadata:object",
        "source-document": "sourceId! mediaType! title! filename providerMetadata:object",
        "file": "url! mediaType! providerMetadata:object",
        "data-*": "id data!:any transient:boolean",
        "start-step": "",
        "finish-step": "",
        "start": "messageId messageMetadata:any",
        "finish": "finishReason:enum:stop,length,content-filter,tool-calls,error,other messageMetadata:any",
        "abort": "reason",
        "message-metadata": "messageMetadata!:any",
    },
    7: {
        "text-start": "id! providerMetadata:object",
        "text-delta": "id! delta! providerMetadata:object",
        "text-end": "id! citations:array providerMetadata:object",
        "error": "errorText!",
        "tool-input-start": (
            "toolCallId! toolName! inputEncoding:enum:json,text providerExecuted:boolean providerMetadata:object "
            "toolMetadata:object dynamic:boolean title"
        ),
        "tool-input-delta": "toolCallId! inputTextDelta!",
        "tool-input-available": (
            "toolCallId! toolName! input!:any providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean title"
        ),
        "tool-input-error": (
            "toolCallId! toolName! input!:any providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean errorText! title"
        ),
        "tool-approval-request": (
            "approvalId! toolCallId! approvalDescriptor:any inputSchemaInput:any reason isAutomatic:boolean signature"
        ),
        "tool-approval-response": (
            "approvalId! approved!:boolean reason providerExecuted:boolean providerMetadata:object"
        ),
        "tool-output-available": (
            "toolCallId! output!:any providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean preliminary:boolean"
        ),
        "tool-output-error": (
            "toolCallId! errorText! providerExecuted:boolean providerMetadata:object toolMetadata:object "
            "dynamic:boolean"
        ),
        "tool-output-denied": "toolCallId!",
        "reasoning-start": "id! providerMetadata:object",
        "reasoning-delta": "id! delta! providerMetadata:object",
        "reasoning-end": "id! providerMetadata:object",
        "custom": "kind! providerMetadata:object",
        "source-url": "sourceId! url! title providerMetadata:object",
        "source-document": "sourceId! mediaType! title! filename providerMetadata:object",
        "file": "mediaType! url! filename providerReference:object providerMetadata:object",
        "reasoning-file": "url! mediaType! providerMetadata:object",
        "steering-message": "id! parts!:array",
        "data-*": "id data!:any transient:boolean",
        "start-step": "",
        "finish": (
            "finishReason:enum:stop,length,content-filter,tool-calls,error,interrupted,other messageMetadata:any"
        ),
        "abort": "reason",
        "message-metadata": "messageMetadata!:any",
        "start": "messageId messageMetadata:any",
        "finish-step": "",
        "reset-step": "",
    },
}

AGUI_BASE = field_spec("timestamp:number rawEvent:any metadata:object subagentRunId")
"""The fields every AG-UI event may carry (``subagentRunId`` not on run and snapshot-of-messages events)."""

_AGUI: dict[str, dict[str, str]] = {
    "0.0": {
        "TEXT_MESSAGE_START": "messageId! role:enum:developer,system,assistant,user name",
        "TEXT_MESSAGE_CONTENT": "messageId! delta!",
        "TEXT_MESSAGE_END": "messageId!",
        "TEXT_MESSAGE_CHUNK": "messageId role:enum:developer,system,assistant,user delta name",
        "THINKING_START": "title",
        "THINKING_END": "",
        "THINKING_TEXT_MESSAGE_START": "",
        "THINKING_TEXT_MESSAGE_CONTENT": "delta!",
        "THINKING_TEXT_MESSAGE_END": "",
        "TOOL_CALL_START": "toolCallId! toolCallName! parentMessageId",
        "TOOL_CALL_ARGS": "toolCallId! delta!",
        "TOOL_CALL_END": "toolCallId!",
        "TOOL_CALL_CHUNK": "toolCallId toolCallName parentMessageId delta",
        "TOOL_CALL_RESULT": "messageId! toolCallId! content! role:literal:tool",
        "STATE_SNAPSHOT": "snapshot:any",
        "STATE_DELTA": "delta!:array",
        "MESSAGES_SNAPSHOT": "messages!:array",
        "ACTIVITY_SNAPSHOT": "messageId! activityType! content!:object replace:boolean",
        "ACTIVITY_DELTA": "messageId! activityType! patch!:array",
        "RAW": "event:any source",
        "CUSTOM": "name! value:any",
        "RUN_STARTED": "threadId! runId! parentRunId input:object",
        "RUN_FINISHED": "threadId! runId! result:any outcome:object usage:array",
        "RUN_ERROR": "message! code usage:array",
        "STEP_STARTED": "stepName!",
        "STEP_FINISHED": "stepName!",
        "REASONING_START": "messageId!",
        "REASONING_MESSAGE_START": "messageId! role!:literal:reasoning",
        "REASONING_MESSAGE_CONTENT": "messageId! delta!",
        "REASONING_MESSAGE_END": "messageId!",
        "REASONING_MESSAGE_CHUNK": "messageId delta",
        "REASONING_END": "messageId!",
        "REASONING_ENCRYPTED_VALUE": "subtype!:enum:tool-call,message entityId! encryptedValue!",
        "SUBAGENT_STARTED": "name! description parentSubagentRunId parentToolCallId parentMessageId",
        "SUBAGENT_FINISHED": "result:any outcome:object",
        "SUBAGENT_ERROR": "message! code",
    },
    "1.0": {
        "TEXT_MESSAGE_START": "messageId! role:enum:developer,system,assistant,user name",
        "TEXT_MESSAGE_CONTENT": "messageId! delta!",
        "TEXT_MESSAGE_END": "messageId!",
        "TEXT_MESSAGE_CHUNK": "messageId role:enum:developer,system,assistant,user delta name",
        "TOOL_CALL_START": "toolCallId! toolCallName! parentMessageId",
        "TOOL_CALL_ARGS": "toolCallId! delta!",
        "TOOL_CALL_END": "toolCallId!",
        "TOOL_CALL_CHUNK": "toolCallId toolCallName parentMessageId delta",
        "TOOL_CALL_RESULT": "messageId! toolCallId! content!:any role:literal:tool",
        "STATE_SNAPSHOT": "snapshot!:any",
        "STATE_DELTA": "delta!:array",
        "MESSAGES_SNAPSHOT": "messages!:array",
        "ACTIVITY_SNAPSHOT": "messageId! activityType! content!:object replace:boolean",
        "ACTIVITY_DELTA": "messageId! activityType! patch!:array",
        "RAW": "event!:any source",
        "CUSTOM": "name! value!:any",
        "RUN_STARTED": "threadId! runId! protocolVersion parentRunId input:object",
        "RUN_FINISHED": "threadId! runId! result:any outcome:object usage:array",
        "RUN_ERROR": "message! code usage:array",
        "STEP_STARTED": "stepName!",
        "STEP_FINISHED": "stepName!",
        "REASONING_START": "messageId!",
        "REASONING_MESSAGE_START": "messageId! role!:literal:reasoning",
        "REASONING_MESSAGE_CONTENT": "messageId! delta!",
        "REASONING_MESSAGE_END": "messageId!",
        "REASONING_MESSAGE_CHUNK": "messageId delta",
        "REASONING_END": "messageId!",
        "REASONING_ENCRYPTED_VALUE": "subtype!:enum:tool-call,message entityId! encryptedValue!",
        "SUBAGENT_STARTED": "name! description parentSubagentRunId parentToolCallId parentMessageId",
        "SUBAGENT_FINISHED": "result:any outcome:object",
        "SUBAGENT_ERROR": "message! code",
    },
}

AISDK_CHUNKS: dict[int, dict[str, dict[str, Field]]] = {
    v: {t: field_spec(s) for t, s in types.items()} for v, types in _AISDK.items()
}
"""Chunk type to fields, per ``ai`` major (5, 6, 7)."""

AGUI_EVENTS: dict[str, dict[str, dict[str, Field]]] = {
    v: {t: field_spec(s) for t, s in types.items()} for v, types in _AGUI.items()
}
"""Event type to its own fields (the base ones apart), per ``@ag-ui/core`` generation (``0.0``, ``1.0``)."""

AGUI_NULL_TOLERATED: frozenset[tuple[str, str]] = frozenset(
    {("TOOL_CALL_START", "parentMessageId"), ("TOOL_CALL_CHUNK", "parentMessageId"), ("RUN_FINISHED", "outcome")}
)
"""``(event type, field)`` pairs whose ``null`` both AG-UI clients read as absent (their schemas say optional)."""

AISDK_CITATION = field_spec("source!:object startIndex:number endIndex:number citedText")
"""One entry of ``text-end.citations`` (``ai`` 7)."""

AISDK_CITED_SOURCES = {
    "url": field_spec("type!:literal:source sourceType!:literal:url id! url! title providerMetadata:object"),
    "document": field_spec(
        "type!:literal:source sourceType!:literal:document id! mediaType! title! filename providerMetadata:object"
    ),
}
"""A citation's ``source``, by its ``sourceType``."""
