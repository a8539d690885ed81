"""The Vercel AI SDK adapter: ChatEvents to the UI Message Stream that ``useChat`` reads.

* :func:`encode` turns a ``ChatEvent`` stream into SSE bytes (``data: <chunk>`` frames, then
  ``data: [DONE]``); :class:`AISDKMapper` is the pure state machine behind it.
* :func:`routes` mounts ``POST /api/chat`` (and the resume ``GET``) in a Starlette or FastAPI app;
  :class:`UIMessageStreamResponse` is the response for an endpoint of your own.
* :class:`ChatRequest` models the ``useChat`` POST body (with the page's ``resume`` answers to interrupts);
  :func:`to_run_input` makes it a ``RunInput``. :class:`UIMessage` and its part models hold the history, and
  :func:`from_ui_messages` and :func:`to_ui_messages` convert it to and from neutral messages.
* :func:`fold` builds the final ``UIMessage`` from a stream, as the client does.
"""

from .fold import UIMessageFolder, afold, fold, parse_sse
from .mapping import CHUNK_FIELDS, CHUNK_TYPES, FINISH_REASONS, STATE_PART_ID, AISDKMapper, Chunk
from .messages import (
    CustomUIPart,
    DataUIPart,
    DynamicToolUIPart,
    FileUIPart,
    ReasoningFileUIPart,
    ReasoningUIPart,
    SourceDocumentUIPart,
    SourceUrlUIPart,
    SteeringMessageUIPart,
    StepStartUIPart,
    TextUIPart,
    ToolApproval,
    ToolUIPart,
    UIMessage,
    UIPart,
    UnknownUIPart,
    from_ui_messages,
    to_ui_messages,
)
from .request import ChatRequest, ResumeItem, continued_message, parse_chat_request, request_error, to_run_input
from .routes import UI_MESSAGE_STREAM_HEADERS, UIMessageStreamResponse, encode, routes

__all__ = [
    "CHUNK_FIELDS",
    "CHUNK_TYPES",
    "FINISH_REASONS",
    "STATE_PART_ID",
    "UI_MESSAGE_STREAM_HEADERS",
    "AISDKMapper",
    "ChatRequest",
    "Chunk",
    "CustomUIPart",
    "DataUIPart",
    "DynamicToolUIPart",
    "FileUIPart",
    "ReasoningFileUIPart",
    "ReasoningUIPart",
    "ResumeItem",
    "SourceDocumentUIPart",
    "SourceUrlUIPart",
    "SteeringMessageUIPart",
    "StepStartUIPart",
    "TextUIPart",
    "ToolApproval",
    "ToolUIPart",
    "UIMessage",
    "UIMessageFolder",
    "UIMessageStreamResponse",
    "UIPart",
    "UnknownUIPart",
    "afold",
    "continued_message",
    "encode",
    "fold",
    "from_ui_messages",
    "parse_chat_request",
    "parse_sse",
    "request_error",
    "routes",
    "to_run_input",
    "to_ui_messages",
]
