"""The OpenAI Responses API as a source: its translator and its agent (the package face is
:mod:`streamkit.sources.openai`; the input, :func:`~.responses_input.to_openai_responses_messages` and
:func:`~.responses_input.to_openai_responses_tools`, is in :mod:`.responses_input`).

- **translator**: :class:`OpenAIResponsesTranslator`, dispatching each streaming event by its ``type``
  (``_HANDLERS``); :func:`openai_responses_events` makes a run of a stream in hand;
- **agent**: :class:`OpenAIResponsesAgent`, over an ``AsyncOpenAI`` client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...events import (
    ChatEvent,
    Citation,
    FinishReason,
    Message,
    RunError,
    RunInput,
    Source,
    Tool,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallPart,
    ToolCallStart,
    ToolResult,
    ToolResultPart,
    Usage,
    hitl,
)
from ..history import provider_text
from ..loop import StepTranslator, run_tool_loop, translate
from ..tools import ServerTool, as_server_tools
from ._common import (
    PROVIDER,
    attr,
    count_of,
    error_code,
    error_text,
    fields_of,
    import_openai,
    provider_error,
    system_text,
)
from .responses_input import (
    CLIENT_ITEMS,
    HOSTED_ITEMS,
    PAIRED_ITEMS,
    reasoning_id,
    to_openai_responses_messages,
    to_openai_responses_tools,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI


__all__ = [
    "OpenAIResponsesAgent",
    "OpenAIResponsesTranslator",
    "openai_responses_events",
    "responses_usage",
]


def responses_usage(usage: Any, model: str | None = None) -> Usage:
    """A Responses ``usage`` object as :class:`~streamkit.events.Usage`."""
    details = attr(usage, "output_tokens_details")
    cached_details = attr(usage, "input_tokens_details")
    reasoning = count_of(attr(details, "reasoning_tokens")) if details is not None else None
    cached = count_of(attr(cached_details, "cached_tokens")) if cached_details is not None else None
    return Usage(
        input_tokens=count_of(attr(usage, "input_tokens")),
        output_tokens=count_of(attr(usage, "output_tokens")),
        total_tokens=count_of(attr(usage, "total_tokens")),
        reasoning_tokens=reasoning or None,
        cached_input_tokens=cached or None,
        model=model or None,
    )


_INCOMPLETE: dict[str, FinishReason] = {"max_output_tokens": "length", "content_filter": "content-filter"}


class OpenAIResponsesTranslator(StepTranslator):
    """Responses API streaming events -> ChatEvents, for one response (pure; see ``StepTranslator``).

    Output text deltas are text (``itemId`` kept as provider metadata); refusal deltas are text too;
    reasoning summary deltas are reasoning (summary parts joined by a blank line), and the reasoning item's
    ``encrypted_content`` and id are kept on ``ReasoningEnd`` (provider metadata ``openai.itemId`` /
    ``openai.reasoningEncryptedContent``, and ``encrypted_value``) for :func:`to_openai_responses_messages` to send
    back. Function calls are keyed by their item but streamed under their ``call_id``. Tools the provider
    runs (web search, file search, code interpreter, image generation, MCP, and an unknown ``*_call`` item
    without a ``call_id``) become provider-executed tool calls under their item id, the item's ``action`` as
    input and its other fields as the result, with provider metadata ``openai.itemId`` / ``openai.itemType``
    on the call and the result, so :func:`to_openai_responses_messages` replays the item. A tool OpenAI runs
    whose result is an item of its own (a ``shell_call`` in OpenAI's container, known by its
    ``environment``, with its ``shell_call_output``; a server-run ``tool_search_call`` with its
    ``tool_search_output``; a ``program`` with its ``program_output``, which may come in a later response,
    its nested function calls being ordinary calls that carry their ``caller``) is a provider-executed call
    under its ``call_id`` (the item id when it has none), its result the output item, each item's other fields
    kept (``openai.itemFields``). An ``mcp_approval_request`` is a provider-executed call named
    ``mcp.<tool>`` under the request's id, its arguments as input, followed by a ``ToolApprovalRequest``: the
    response finishes ``tool-calls`` (a pause), and the user's answer goes back as an
    ``mcp_approval_response``. Tools the caller runs are
    ordinary tool calls under their ``call_id``, left to the client (or a server tool of their name): a
    ``custom_tool_call`` named by its tool, its free-form text input streamed by
    ``response.custom_tool_call_input.delta`` and kept as text (not parsed as JSON); a ``computer_call``,
    ``local_shell_call``, ``shell_call``, ``apply_patch_call`` (or an unknown ``*_call`` item with a
    ``call_id``) named by its kind without ``_call``, its ``action`` (``operation``) as input; provider
    metadata ``openai.itemId`` / ``openai.itemType`` (and ``inputField`` / ``itemFields``, what the input
    item needs back) on ``ToolCallStart`` and ``ToolCallEnd``. ``url_citation``/``file_citation``
    annotations become ``Source``\\ s cited by the text.
    ``response.completed`` brings usage; ``response.incomplete`` a ``length`` or ``content-filter``
    finish; ``response.failed`` and ``error`` end the step with a ``RunError`` carrying the message.
    """

    provider = PROVIDER

    def __init__(self, prefix: str | None = None, taken: set[str] | None = None) -> None:
        super().__init__(prefix, taken)
        self.model: str | None = None
        self.response_id: str | None = None
        self._sources = 0
        self._summary_index: dict[str, int] = {}
        self._hosted: set[str] = set()
        self._said: dict[Any, list[str]] = {}
        self._awaiting: list[tuple[str, str | None, str]] = []  # (output kind, call_id, streamed id)
        self._asked = False

    def feed(self, event: Any) -> list[ChatEvent]:
        """The events for one streaming event (unknown event types are ignored)."""
        out: list[ChatEvent] = []
        fields = fields_of(event)
        kind = fields.get("type")
        if kind == "response.output_text.delta":  # the common event, without the table's call
            delta = fields.get("delta")
            if delta and type(delta) is str:
                item = fields.get("item_id")
                said = self._said.get(item)
                if said is None:
                    said = self._said[item] = []
                said.append(delta)
                self.text(delta, out, provider_metadata=None if self.text_open else _item_meta(item))
            return out
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, fields, event, out)
        return out

    # -- events (each handler: the event's fields, the event, the output list) ------------------------

    def _text_delta(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        delta = fields.get("delta")
        if delta and type(delta) is str:
            item = fields.get("item_id")
            said = self._said.get(item)
            if said is None:
                said = self._said[item] = []
            said.append(delta)
            self.text(delta, out, provider_metadata=None if self.text_open else _item_meta(item))

    def _text_done(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        self._restated(fields.get("item_id"), fields.get("text"), out)

    def _refusal_done(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        self._restated(fields.get("item_id"), fields.get("refusal"), out)

    def _restated(self, item: Any, whole: Any, out: list[ChatEvent]) -> None:
        # the whole text restated: stream what the deltas missed (a proxy may drop or coalesce them)
        so_far = "".join(self._said.get(item, ()))
        if isinstance(whole, str) and len(whole) > len(so_far) and whole.startswith(so_far):
            self._said[item] = [whole]
            self.text(whole[len(so_far) :], out, provider_metadata=_item_meta(item))

    def _args_delta(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        delta = fields.get("delta")
        item = fields.get("item_id")
        if isinstance(delta, str) and self.has_call(item):
            self.call_args(item, delta, out)

    def _reasoning_delta(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        delta = attr(event, "delta")
        if isinstance(delta, str):
            self._reason(attr(event, "item_id"), delta, attr(event, "summary_index"), out)

    def _annotation_added(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        self._annotation(attr(event, "annotation"), out)

    def _output_item_added(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        self._item_added(attr(event, "item"), out)

    def _output_item_done(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        self._item_done(attr(event, "item"), out)

    def _created(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        response = attr(event, "response")
        self.response_id = attr(response, "id") or self.response_id
        self.model = attr(response, "model") or self.model

    def _completed(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        self._ended(attr(event, "response"))
        self.finish_reason = "tool-calls" if self._asked else "stop"  # an approval asked: the run pauses

    def _incomplete(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        response = attr(event, "response")
        self._ended(response)
        details = attr(response, "incomplete_details")
        self.finish_reason = _INCOMPLETE.get(attr(details, "reason") or "", "other")

    def _ended(self, response: Any) -> None:
        self.model = attr(response, "model") or self.model
        usage = attr(response, "usage")
        if usage is not None:
            self.usage = responses_usage(usage, self.model)

    def _failed(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        error = attr(attr(event, "response"), "error")
        self.error = RunError(message=error_text(error) if error else "The response failed.", code=error_code(error))

    def _error(self, fields: Mapping[str, Any], event: Any, out: list[ChatEvent]) -> None:
        error = attr(event, "error") or event
        self.error = RunError(message=error_text(error), code=error_code(error))

    # -- helpers -------------------------------------------------------------------------------------

    def _reason(self, item: Any, delta: str, index: Any, out: list[ChatEvent]) -> None:
        key = item if isinstance(item, str) else ""
        if isinstance(index, int):
            last = self._summary_index.get(key)
            if last is not None and index != last and self.reasoning_open and delta:
                self.reasoning("\n\n", out)
            self._summary_index[key] = index
        self.reasoning(delta, out, provider_metadata=_item_meta(item))

    def _item_added(self, item: Any, out: list[ChatEvent]) -> None:
        kind = attr(item, "type")
        item_id = attr(item, "id")
        if kind == "function_call":
            call_id = attr(item, "call_id") or item_id
            self.call(item_id, out, id=call_id, name=attr(item, "name"), provider_metadata=_function_meta(item))
            args = attr(item, "arguments")
            if isinstance(args, str) and args:
                self.call_args(item_id, args, out)
        elif kind == "custom_tool_call":
            key = item_id or attr(item, "call_id")
            self.call(key, out, id=attr(item, "call_id"), name=attr(item, "name"), provider_metadata=_custom_meta(item))
            text = attr(item, "input")
            if isinstance(text, str) and text:
                self.call_args(key, text, out)
        elif kind == "reasoning":
            self.end_reasoning(out)
            self.reasoning("", out, provider_metadata=_item_meta(item_id), id=reasoning_id(item_id))
        elif kind == "message":
            self.end_text(out)

    def _item_done(self, item: Any, out: list[ChatEvent]) -> None:
        kind = attr(item, "type")
        item_id = attr(item, "id")
        if kind == "function_call":
            if not self.has_call(item_id):
                self._item_added(item, out)
            args = attr(item, "arguments")
            function_meta = _function_meta(item)
            called = function_meta if function_meta is not None and "caller" in function_meta[PROVIDER] else None
            self.end_call(item_id, out, arguments=args if isinstance(args, str) else None, provider_metadata=called)
        elif kind == "reasoning":
            if not self.reasoning_open:
                self.reasoning("", out, provider_metadata=_item_meta(item_id), id=reasoning_id(item_id))
            encrypted = attr(item, "encrypted_content")
            meta: dict[str, Any] = {"itemId": item_id}
            if isinstance(encrypted, str) and encrypted:
                meta["reasoningEncryptedContent"] = encrypted
            else:
                encrypted = None
            self.end_reasoning(out, provider_metadata={PROVIDER: meta}, encrypted_value=encrypted)
        elif kind == "message":
            self.end_text(out, provider_metadata=_item_meta(item_id))
        elif kind == "custom_tool_call":
            key = item_id or attr(item, "call_id")
            if not self.has_call(key):
                self._item_added(item, out)
            text = attr(item, "input")
            self.end_call(
                key,
                out,
                arguments=text if isinstance(text, str) else None,
                provider_metadata=_custom_meta(item),
                text_input=True,
                provider_tool=True,
            )
        elif kind == "mcp_approval_request":
            self._approval_request(item, out)
        elif kind in _OUTPUT_OF:
            self._provider_output(kind, item, out)
        elif kind == "program":
            self._provider_call(kind, item, out)
        elif isinstance(kind, str) and kind.endswith("_call"):
            call_id = attr(item, "call_id")
            hosted = kind in HOSTED_ITEMS or not isinstance(call_id, str) or _server_run(item)
            if not hosted:
                self._client_call(kind, call_id, item, out)
            elif kind in PAIRED_ITEMS:
                self._provider_call(kind, item, out)
            elif isinstance(item_id, str):
                self._hosted_call(kind, item_id, item, out)

    def _client_call(self, kind: str, call_id: str, item: Any, out: list[ChatEvent]) -> None:
        """A tool the caller runs (computer, local shell, shell, apply patch...): a pending tool call."""
        item_id = attr(item, "id")
        key = ("client", item_id or call_id)
        if self.has_call(key):
            return
        data = item.model_dump(exclude_none=True, by_alias=True) if hasattr(item, "model_dump") else dict(item)
        for name in ("id", "type", "call_id", "status"):
            data.pop(name, None)
        meta: dict[str, Any] = {"itemId": item_id, "itemType": kind} if item_id else {"itemType": kind}
        field = next((f for f in ("action", "actions", "operation", "arguments") if f in data), None)
        if field is not None:
            value = data[field]
            meta["inputField"] = field
            keep = CLIENT_ITEMS.get(kind, ())
            extra = {k: v for k, v in data.items() if k in keep}
            if extra:
                meta["itemFields"] = extra
        else:
            value = data
        metadata = {PROVIDER: meta}
        self.call(key, out, id=call_id, name=kind[: -len("_call")], provider_metadata=metadata)
        self.end_call(key, out, arguments=provider_text(value), provider_metadata=metadata, provider_tool=True)

    def _hosted_call(self, kind: str, item_id: str, item: Any, out: list[ChatEvent]) -> None:
        """A tool the provider ran (web search, file search, code interpreter, ...), with its result."""
        if item_id in self._hosted or item_id in self.taken:
            return
        self.end_reasoning(out)
        self.end_text(out)
        self._hosted.add(item_id)
        self.taken.add(item_id)
        data = item.model_dump(exclude_none=True) if hasattr(item, "model_dump") else dict(item)
        data.pop("id", None)
        data.pop("type", None)
        action = data.pop("action", None)
        name = kind[: -len("_call")]
        meta = {PROVIDER: {"itemId": item_id, "itemType": kind}}
        value = action if action is not None else {}
        out.append(ToolCallStart(id=item_id, name=name, provider_executed=True, provider_metadata=meta))
        out.append(ToolCallEnd(id=item_id, input=value, provider_metadata=meta))
        out.append(ToolResult(id=item_id, output=data, provider_metadata=meta))
        self.parts.append(
            ToolCallPart(id=item_id, name=name, input=value, provider_executed=True, provider_metadata=meta)
        )
        self.parts.append(ToolResultPart(id=item_id, name=name, output=data, provider_metadata=meta))

    def _provider_call(self, kind: str, item: Any, out: list[ChatEvent]) -> None:
        """A tool the provider runs whose result comes as an item of its own (a shell call OpenAI ran in its
        container, a server-run tool search, a program): a provider-executed call under its ``call_id`` (its
        item id when it has none); the ``*_output`` item that follows is its result (:meth:`_provider_output`)."""
        data = _item_fields(item)
        item_id = data.pop("id", None)
        data.pop("type", None)
        field, output_kind, _ = PAIRED_ITEMS[kind]
        value = data.pop(field, None)
        call_id = data.get("call_id")
        key = call_id if isinstance(call_id, str) and call_id else item_id
        if not isinstance(key, str) or key in self._hosted or key in self.taken:
            return
        self.end_reasoning(out)
        self.end_text(out)
        self._hosted.add(key)
        self.taken.add(key)
        self._awaiting.append((output_kind, call_id if isinstance(call_id, str) else None, key))
        meta: dict[str, Any] = {"itemType": kind, "itemFields": data}
        if isinstance(item_id, str):
            meta["itemId"] = item_id
        metadata = {PROVIDER: meta}
        name = _NAMES.get(kind, kind)
        value = value if value is not None else {}
        out.append(ToolCallStart(id=key, name=name, provider_executed=True, provider_metadata=metadata))
        out.append(ToolCallEnd(id=key, input=value, provider_metadata=metadata))
        self.parts.append(
            ToolCallPart(id=key, name=name, input=value, provider_executed=True, provider_metadata=metadata)
        )

    def _provider_output(self, kind: str, item: Any, out: list[ChatEvent]) -> None:
        """The result item of a call :meth:`_provider_call` streamed (in this response, or, for a program, in
        an earlier one: then the result names the program's ``call_id``)."""
        data = _item_fields(item)
        item_id = data.pop("id", None)
        data.pop("type", None)
        call_kind = _OUTPUT_OF[kind]
        value = data.pop(PAIRED_ITEMS[call_kind][2], None)
        call_id = data.get("call_id")
        key: str | None = None
        for n, (want, cid, streamed) in enumerate(self._awaiting):
            if want == kind and (cid == call_id or not isinstance(call_id, str)):
                key = streamed
                del self._awaiting[n]
                break
        if key is None and isinstance(call_id, str) and call_id:
            key = call_id  # the call came in an earlier response
        if key is None:
            return
        self.end_reasoning(out)
        self.end_text(out)
        meta: dict[str, Any] = {"itemType": kind, "itemFields": data}
        if isinstance(item_id, str):
            meta["itemId"] = item_id
        metadata = {PROVIDER: meta}
        name = _NAMES.get(call_kind, call_kind)
        out.append(ToolResult(id=key, output=value, provider_metadata=metadata))
        self.parts.append(ToolResultPart(id=key, name=name, output=value, provider_metadata=metadata))

    def _approval_request(self, item: Any, out: list[ChatEvent]) -> None:
        """An MCP call OpenAI asks the user to approve: a provider-executed call under the request's id (named
        ``mcp.<tool>``), its arguments as input, then a ``ToolApprovalRequest``; the response pauses."""
        item_id = attr(item, "id")
        if not isinstance(item_id, str) or not item_id or item_id in self._hosted or item_id in self.taken:
            return
        self.end_reasoning(out)
        self.end_text(out)
        self._hosted.add(item_id)
        self.taken.add(item_id)
        tool = attr(item, "name")
        arguments = attr(item, "arguments")
        text = arguments if isinstance(arguments, str) else provider_text(arguments or {})
        try:
            value: Any = json.loads(text) if text.strip() else {}
        except ValueError:
            value = text
        meta = {"itemId": item_id, "itemType": "mcp_approval_request", "serverLabel": attr(item, "server_label")}
        metadata = {PROVIDER: meta}
        name = f"mcp.{tool}" if isinstance(tool, str) and tool else "mcp"
        out.append(
            ToolCallStart(id=item_id, name=name, dynamic=True, provider_executed=True, provider_metadata=metadata)
        )
        if text:
            out.append(ToolCallArgsDelta(id=item_id, delta=text))
        out.append(ToolCallEnd(id=item_id, input=value, provider_metadata=metadata))
        out.append(hitl.request_approval(item_id))
        self.parts.append(
            ToolCallPart(id=item_id, name=name, input=value, provider_executed=True, provider_metadata=metadata)
        )
        self._asked = True

    def _annotation(self, annotation: Any, out: list[ChatEvent]) -> None:
        kind = attr(annotation, "type")
        self._sources += 1
        sid = f"source_{self.prefix}_{self._sources}"
        if kind == "url_citation":
            url = attr(annotation, "url")
            if not isinstance(url, str):
                return
            source = Source(id=sid, url=url, title=attr(annotation, "title") or None)
        elif kind in ("file_citation", "container_file_citation", "file_path"):
            filename = attr(annotation, "filename") or attr(annotation, "file_id") or "file"
            meta = {PROVIDER: {"fileId": attr(annotation, "file_id")}}
            source = Source(
                id=sid, media_type="application/octet-stream", title=filename, filename=filename, provider_metadata=meta
            )
        else:
            return
        out.append(source)
        start, end = count_of(attr(annotation, "start_index")), count_of(attr(annotation, "end_index"))
        self.cite(Citation(source=source, start_index=start, end_index=end))

    def fail(self, exc: BaseException) -> RunError:
        """The SDK's exception as a RunError with the provider's message."""
        return provider_error(exc)


_HANDLERS: dict[str, Any] = {
    "response.output_text.delta": OpenAIResponsesTranslator._text_delta,
    "response.refusal.delta": OpenAIResponsesTranslator._text_delta,
    "response.output_text.done": OpenAIResponsesTranslator._text_done,
    "response.refusal.done": OpenAIResponsesTranslator._refusal_done,
    "response.function_call_arguments.delta": OpenAIResponsesTranslator._args_delta,
    "response.custom_tool_call_input.delta": OpenAIResponsesTranslator._args_delta,
    "response.reasoning_summary_text.delta": OpenAIResponsesTranslator._reasoning_delta,
    "response.reasoning_text.delta": OpenAIResponsesTranslator._reasoning_delta,
    "response.output_text.annotation.added": OpenAIResponsesTranslator._annotation_added,
    "response.output_item.added": OpenAIResponsesTranslator._output_item_added,
    "response.output_item.done": OpenAIResponsesTranslator._output_item_done,
    "response.created": OpenAIResponsesTranslator._created,
    "response.in_progress": OpenAIResponsesTranslator._created,
    "response.completed": OpenAIResponsesTranslator._completed,
    "response.incomplete": OpenAIResponsesTranslator._incomplete,
    "response.failed": OpenAIResponsesTranslator._failed,
    "error": OpenAIResponsesTranslator._error,
}
"""The translator's handler for each streaming event type."""


def _custom_meta(item: Any) -> dict[str, dict[str, Any]]:
    meta: dict[str, Any] = {"itemType": "custom_tool_call"}
    item_id = attr(item, "id")
    if isinstance(item_id, str) and item_id:
        meta["itemId"] = item_id
    return {PROVIDER: meta}


_OUTPUT_OF = {output: call for call, (_, output, _) in PAIRED_ITEMS.items()}
"""The call item type each result item answers."""

_NAMES = {"shell_call": "shell", "tool_search_call": "tool_search", "program": "program"}
"""The tool name a provider-run item streams under."""


def _server_run(item: Any) -> bool:
    """Whether a call item with a ``call_id`` runs on OpenAI's side: ``execution: "server"`` (tool search),
    or a shell call in a container OpenAI hosts (``environment.type`` ``container_auto`` / ``_reference``)."""
    if attr(item, "execution") == "server":
        return True
    kind = attr(attr(item, "environment"), "type")
    return isinstance(kind, str) and kind.startswith("container")


def _item_fields(item: Any) -> dict[str, Any]:
    """An output item's fields as JSON data (nulls left out, as the hosted items' are)."""
    if hasattr(item, "model_dump"):
        data: dict[str, Any] = item.model_dump(exclude_none=True, by_alias=True)
        return data
    return {k: v for k, v in dict(item).items() if v is not None}


def _function_meta(item: Any) -> dict[str, dict[str, Any]] | None:
    """A function call's provider metadata: its item id, and its ``caller`` when a program called it."""
    meta = _item_meta(attr(item, "id"))
    caller = attr(item, "caller")
    if caller is not None and meta is not None:
        caller = caller.model_dump(exclude_none=True) if hasattr(caller, "model_dump") else caller
        if isinstance(caller, dict) and caller.get("type") == "program":
            meta[PROVIDER]["caller"] = caller
    return meta


def _item_meta(item_id: Any) -> dict[str, dict[str, Any]] | None:
    return {PROVIDER: {"itemId": item_id}} if isinstance(item_id, str) and item_id else None


def openai_responses_events(
    events: AsyncIterable[Any] | Iterable[Any], *, prefix: str | None = None
) -> AsyncGenerator[ChatEvent, None]:
    """A well-formed run from a Responses API stream (SDK ``ResponseStreamEvent``\\ s or dicts, an async or
    a sync iterable)."""
    return translate(events, OpenAIResponsesTranslator(prefix))


class _ResponsesSteps:
    """The Responses API provider for the tool loop."""

    def __init__(self, agent: OpenAIResponsesAgent, run: RunInput) -> None:
        self.agent = agent
        self.instructions = system_text(run, agent.system_prompt)

    def messages(self, run: RunInput) -> list[dict[str, Any]]:
        return to_openai_responses_messages(run)

    def translator(self, prefix: str, taken: set[str]) -> StepTranslator:
        return OpenAIResponsesTranslator(prefix, taken)

    def step(self, messages: list[dict[str, Any]], tools: Sequence[Tool]) -> AsyncIterable[Any]:
        return self.agent._stream(messages, tools, self.instructions)

    def append(self, messages: list[dict[str, Any]], turn: Sequence[Message]) -> None:
        messages.extend(to_openai_responses_messages(RunInput(thread_id="", run_id="", messages=list(turn))))


class OpenAIResponsesAgent:
    """An agent core over the Responses API with an ``AsyncOpenAI`` client (stateless: each request sends
    the whole history; ``store`` defaults to False and reasoning's ``encrypted_content`` is asked for and
    sent back, so reasoning models keep their reasoning across tool calls).

    ``tools`` are server tools, run by the shared tool loop; the client's frontend tools are offered too and
    their calls left pending. ``options`` are merged into every request (``reasoning``, ``temperature``...).
    """

    def __init__(
        self,
        client: AsyncOpenAI | None = None,
        *,
        model: str,
        tools: Sequence[Any] = (),
        system_prompt: str | None = None,
        max_steps: int = 8,
        store: bool = False,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.client = client if client is not None else import_openai().AsyncOpenAI()
        self.model = model
        self.tools: list[ServerTool] = as_server_tools(tools)
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.store = store
        self.options = dict(options or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    def request_body(
        self, items: list[dict[str, Any]], tools: Sequence[Tool] = (), instructions: str | None = None
    ) -> dict[str, Any]:
        """The keyword arguments of one streaming ``responses.create`` call."""
        body: dict[str, Any] = {"model": self.model, "input": items, "stream": True, "store": self.store}
        if not self.store:
            body["include"] = ["reasoning.encrypted_content"]
        if instructions:
            body["instructions"] = instructions
        if tools:
            body["tools"] = to_openai_responses_tools(tools)
        body.update(self.options)
        return body

    def __call__(self, run: RunInput) -> AsyncGenerator[ChatEvent, None]:
        """Stream one run: model calls and tool calls until the model stops (at most ``max_steps``)."""
        return run_tool_loop(run, _ResponsesSteps(self, run), self.tools, max_steps=self.max_steps)

    async def _stream(
        self, items: list[dict[str, Any]], tools: Sequence[Tool], instructions: str | None
    ) -> AsyncGenerator[Any, None]:
        stream = await self.client.responses.create(**self.request_body(items, tools, instructions))
        async with stream:
            async for event in stream:
                yield event
