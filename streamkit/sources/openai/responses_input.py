"""The Responses API's input: a ``RunInput`` as ``input`` items and ``tools`` (the package face is
:mod:`streamkit.sources.openai`).

:func:`to_openai_responses_messages` makes the ``input`` items (reasoning items with their
``encrypted_content``, each call directly followed by its output item, hosted and client-run tools as their
own item types) and :func:`to_openai_responses_tools` the function tools. The tables of item types
(:data:`PAIRED_ITEMS`, :data:`CLIENT_ITEMS`, :data:`HOSTED_ITEMS`) and :func:`reasoning_id` are read by the
translator (:mod:`.responses`) too, so that what it keeps of an item is what this module sends back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...events import FilePart, Message, ReasoningPart, RunInput, TextPart, Tool, ToolCallPart, ToolResultPart
from ..history import NO_RESULT, provider_text, result_text, steps, tool_results
from ._common import PROVIDER

__all__ = [
    "to_openai_responses_messages",
    "to_openai_responses_tools",
]


def reasoning_id(item_id: Any) -> str | None:
    """A reasoning item's id, used as its block's id: a client that keeps only message ids and the
    encrypted value (AG-UI) still brings back what the API needs to take the reasoning again."""
    return item_id if isinstance(item_id, str) and item_id.startswith("rs_") else None


PAIRED_ITEMS: dict[str, tuple[str, str, str]] = {
    "shell_call": ("action", "shell_call_output", "output"),
    "tool_search_call": ("arguments", "tool_search_output", "tools"),
    "program": ("code", "program_output", "result"),
}
"""Items of tools the provider runs whose result is an item of its own: the call's input field, the result
item's type, and its output field."""


CLIENT_ITEMS: dict[str, tuple[str, ...]] = {
    "computer_call": ("pending_safety_checks",),
    "local_shell_call": (),
    "shell_call": ("environment", "caller"),
    "apply_patch_call": ("caller",),
}
"""The output items of tools the caller runs (answered by an ``*_output`` input item), with the fields
besides the input that their input item takes back (kept as provider metadata ``openai.itemFields``)."""


HOSTED_ITEMS = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call"}
)
"""The output items of tools OpenAI runs itself that the API takes back as input items as they are."""


def _responses_user_content(message: Message) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, FilePart):
            if part.media_type.startswith("image/") or part.media_type == "image":
                content.append({"type": "input_image", "image_url": part.url, "detail": "auto"})
            elif part.url.startswith("data:"):
                content.append({"type": "input_file", "filename": part.filename or "file", "file_data": part.url})
            else:
                content.append({"type": "input_file", "file_url": part.url})
    return content


def to_openai_responses_messages(run: RunInput) -> list[dict[str, Any]]:
    """The Responses ``input`` items for ``run``'s history, in causal order.

    User messages become ``input_text``/``input_image``/``input_file`` content; assistant text becomes an
    assistant message; reasoning that carries its OpenAI item id comes back as a ``reasoning`` item with its
    summary and ``encrypted_content`` (needed with ``store=False``); each tool call is a ``function_call``
    item directly followed by its ``function_call_output``. The system prompt goes in ``instructions``.

    A tool OpenAI ran itself (a provider-executed call) is replayed as the output item it came as, with
    the fields the API requires: ``web_search_call`` (``id``, ``status``, ``action``), ``file_search_call``
    (``queries``, ``results``), ``code_interpreter_call`` (``code``, ``container_id``, ``outputs``),
    ``image_generation_call`` (``result``), ``mcp_call`` (``name``, ``arguments``, ``server_label``,
    ``output``/``error``), each a member of the API's input items, sent in full so that ``store=False``
    needs no stored item (the API takes a ``web_search_call`` back so). Other hosted items, a search
    without its ``action``, a call whose result was never recorded and one without its OpenAI item id
    (another provider's) are left out.

    A shell call OpenAI ran, a server-run tool search and a program go back as the call item and its output
    item as they came (a program still waiting for its nested calls, without its output); an MCP approval
    request as its ``mcp_approval_request`` item, followed by an ``mcp_approval_response`` (``approve``, and
    the user's ``reason``) once the call's part carries the answer (``approval``). A function call a program
    made goes back with its ``caller``, on the call and on its output.

    A call the client ran (a custom tool, computer, shell or patch call, known by its provider metadata
    ``openai.itemType``) goes back as its own item type followed by its ``*_output`` item, or as a
    ``function_call`` pair when the result cannot take the required shape (see :func:`_client_pair`).
    """
    out: list[dict[str, Any]] = []
    results = tool_results(run.messages)
    sent: set[str] = set()
    for message in run.messages:
        if message.role in ("system", "developer"):
            out.append({"role": message.role, "content": message.text})
        elif message.role == "user":
            out.append({"role": "user", "content": _responses_user_content(message)})
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart) and part.id not in sent:
                    sent.add(part.id)
                    out.append({"type": "function_call_output", "call_id": part.id, "output": result_text(part)})
        else:
            for step in steps(message):
                _responses_step(step, results, sent, out, message.id)
    return out


def _responses_step(
    step: list[Any],
    results: Mapping[str, ToolResultPart],
    sent: set[str],
    out: list[dict[str, Any]],
    message_id: str = "",
) -> None:
    calls: list[ToolCallPart] = []
    for part in step:
        if isinstance(part, ReasoningPart):
            item = _reasoning_item(part, message_id)
            if item is not None:
                out.append(item)
        elif isinstance(part, TextPart):
            if part.text:
                out.append({"role": "assistant", "content": part.text})
        elif isinstance(part, ToolCallPart) and part.provider_executed:
            items = _provider_items(part, results.get(part.id))
            if items is not None:
                sent.add(part.id)
                out.extend(items)
                continue
            item = _hosted_item(part, results.get(part.id))
            if item is not None:
                out.append(item)
        elif isinstance(part, ToolCallPart):
            calls.append(part)
            pair = _client_pair(part, results.get(part.id))
            arguments = provider_text(part.input)
            function: dict[str, Any] = {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": arguments,
            }
            caller = _caller(part)
            if caller is not None:
                function["caller"] = caller
            out.append(pair[0] if pair is not None else function)
    for call in calls:
        if call.id in sent:
            continue
        sent.add(call.id)
        result = results.get(call.id)
        pair = _client_pair(call, result)
        if pair is not None:
            out.append(pair[1])
            continue
        output = result_text(result) if result is not None else NO_RESULT
        answer: dict[str, Any] = {"type": "function_call_output", "call_id": call.id, "output": output}
        caller = _caller(call)
        if caller is not None:
            answer["caller"] = caller
        out.append(answer)


def _caller(call: ToolCallPart) -> dict[str, Any] | None:
    """The ``caller`` of a function call a program made (kept as provider metadata ``openai.caller``)."""
    caller = ((call.provider_metadata or {}).get(PROVIDER) or {}).get("caller")
    return caller if isinstance(caller, dict) else None


def _provider_items(call: ToolCallPart, result: ToolResultPart | None) -> list[dict[str, Any]] | None:
    """A provider-run call whose result is an item of its own (``shell_call`` + ``shell_call_output``,
    ``tool_search_call`` + ``tool_search_output``, ``program`` + ``program_output``) as the two items it
    came as, the result left out while there is none (a program still waiting for its calls); an MCP
    approval request as its ``mcp_approval_request`` item, followed by the user's answer as an
    ``mcp_approval_response`` once given. None for any other call."""
    meta = (call.provider_metadata or {}).get(PROVIDER) or {}
    kind = meta.get("itemType")
    item_id = meta.get("itemId")
    if kind == "mcp_approval_request":
        if not isinstance(item_id, str):
            return None
        name = call.name[len("mcp.") :] if call.name.startswith("mcp.") else call.name
        request = {
            "type": kind,
            "id": item_id,
            "name": name,
            "arguments": provider_text(call.input if call.input is not None else {}),
            "server_label": meta.get("serverLabel") or "",
        }
        approval = call.approval
        if approval is None or approval.approved is None:
            return [request]
        answer: dict[str, Any] = {"type": "mcp_approval_response", "approval_request_id": item_id}
        answer["approve"] = approval.approved
        if approval.reason:
            answer["reason"] = approval.reason
        return [request, answer]
    if kind not in PAIRED_ITEMS:
        return None
    field, output_kind, output_field = PAIRED_ITEMS[kind]
    item: dict[str, Any] = {"type": kind, **(meta.get("itemFields") or {}), field: call.input}
    if isinstance(item_id, str):
        item["id"] = item_id
    out = [item]
    result_meta = (result.provider_metadata or {}).get(PROVIDER) or {} if result is not None else {}
    if result is not None and result_meta.get("itemType") == output_kind:
        output = result.output
        if isinstance(output, str) and output_kind != "program_output":  # AG-UI keeps a result as JSON text
            output = _json_value(output)
        answer = {"type": output_kind, **(result_meta.get("itemFields") or {}), output_field: output}
        if isinstance(result_meta.get("itemId"), str):
            answer["id"] = result_meta["itemId"]
        out.append(answer)
    return out


def _client_pair(call: ToolCallPart, result: ToolResultPart | None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A call of a tool the caller runs, with its answer, as the API's own item types: ``custom_tool_call``
    + ``custom_tool_call_output``, ``computer_call`` + ``computer_call_output``, ``local_shell_call`` +
    ``local_shell_call_output``, ``shell_call`` + ``shell_call_output``, ``apply_patch_call`` +
    ``apply_patch_call_output``. None when the call is an ordinary function call, or when the answer cannot
    take the shape its output item requires (then the pair goes as ``function_call`` +
    ``function_call_output``): a computer call answered by anything but a screenshot (a ``data:``/``http``
    image URL, or an object with ``image_url`` or ``file_id``), a shell call answered by anything but its
    output entries (``stdout``, ``stderr``, ``outcome``; one object or a list), a computer, shell or local
    shell call without a result or without its OpenAI item id where the item requires it."""
    meta = (call.provider_metadata or {}).get(PROVIDER) or {}
    kind = meta.get("itemType")
    if kind == "custom_tool_call":
        text = call.input if isinstance(call.input, str) else provider_text(call.input)
        output = result_text(result) if result is not None else NO_RESULT
        return (
            {"type": kind, "call_id": call.id, "name": call.name, "input": text},
            {"type": "custom_tool_call_output", "call_id": call.id, "output": output},
        )
    if kind not in CLIENT_ITEMS:
        return None
    item_id = meta.get("itemId")
    field = meta.get("inputField")
    fields = meta.get("itemFields") or {}
    item: dict[str, Any] = {"type": kind, "call_id": call.id}
    if isinstance(item_id, str) and item_id:
        item["id"] = item_id
    elif kind in ("computer_call", "local_shell_call"):
        return None  # their input items require the item id
    if isinstance(field, str):
        item[field] = call.input
    elif isinstance(call.input, dict):
        item.update(call.input)
    item.update({k: v for k, v in fields.items() if k in CLIENT_ITEMS[kind]})
    item["status"] = "completed"
    answer: dict[str, Any]
    if kind == "apply_patch_call":
        failed = result is None or result.error is not None or result.denied
        answer = {"type": "apply_patch_call_output", "call_id": call.id, "status": "failed" if failed else "completed"}
        answer["output"] = result_text(result) if result is not None else NO_RESULT
        return item, answer
    if result is None:
        return None
    if kind == "local_shell_call":
        # the SDK's input type names the call by ``id`` (the model's call id), not ``call_id``
        return item, {"type": "local_shell_call_output", "id": call.id, "output": result_text(result)}
    if result.error is not None or result.denied:
        return None
    value = _json_value(result.output)
    if kind == "computer_call":
        item.setdefault("pending_safety_checks", [])
        screenshot = _screenshot(value)
        if screenshot is None:
            return None
        answer = {"type": "computer_call_output", "call_id": call.id, "output": screenshot}
        if isinstance(value, dict) and isinstance(value.get("acknowledged_safety_checks"), list):
            answer["acknowledged_safety_checks"] = value["acknowledged_safety_checks"]
        return item, answer
    entries = _shell_entries(value)
    if entries is None:
        return None
    return item, {"type": "shell_call_output", "call_id": call.id, "output": entries}


def _json_value(output: Any) -> Any:
    """A tool result's output, with JSON text (how AG-UI keeps results) parsed."""
    if isinstance(output, str) and output[:1] in ("{", "["):
        try:
            return json.loads(output)
        except ValueError:
            return output
    return output


def _screenshot(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str) and value.startswith(("data:image/", "https://", "http://")):
        return {"type": "computer_screenshot", "image_url": value}
    if isinstance(value, dict):
        shot = {k: value[k] for k in ("image_url", "file_id") if isinstance(value.get(k), str) and value[k]}
        if shot:
            return {"type": "computer_screenshot", **shot}
    return None


def _shell_entries(value: Any) -> list[dict[str, Any]] | None:
    entries = value if isinstance(value, list) else [value]
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("stdout"), str)
            and isinstance(entry.get("stderr"), str)
            and isinstance(entry.get("outcome"), dict)
        ):
            return None
    return [{"stdout": e["stdout"], "stderr": e["stderr"], "outcome": e["outcome"]} for e in entries]


_NULLABLE: dict[str, tuple[str, ...]] = {
    "code_interpreter_call": ("code", "outputs"),
    "image_generation_call": ("result",),
}
"""Fields an item type requires even when null (the SDK's objects leave nulls out)."""


def _hosted_item(call: ToolCallPart, result: ToolResultPart | None) -> dict[str, Any] | None:
    """A tool OpenAI ran itself, as the output item it came as (``{"type": "web_search_call", "id",
    "status", "action"}``...), rebuilt from the call (its ``action``) and its result (the item's other
    fields); None for an item the API cannot take back (see :func:`to_openai_responses_messages`)."""
    meta = (call.provider_metadata or {}).get(PROVIDER) or {}
    kind = meta.get("itemType") or f"{call.name}_call"
    item_id = meta.get("itemId")  # none: a tool another provider ran
    if kind not in HOSTED_ITEMS or not isinstance(item_id, str) or result is None or result.error is not None:
        return None
    output = result.output
    if isinstance(output, str):  # AG-UI keeps a tool result as JSON text
        try:
            output = json.loads(output)
        except ValueError:
            return None
    if not isinstance(output, dict):
        return None
    item: dict[str, Any] = {"type": kind, "id": item_id, **output}
    if call.input not in (None, {}):
        item["action"] = call.input
    elif kind == "web_search_call":
        return None  # the API's web_search_call input item requires its action
    for key in _NULLABLE.get(kind, ()):
        item.setdefault(key, None)
    if kind != "mcp_call":
        item.setdefault("status", "completed")
    return item


def _reasoning_item(part: ReasoningPart, message_id: str = "") -> dict[str, Any] | None:
    meta = (part.provider_metadata or {}).get(PROVIDER) or {}
    item_id = meta.get("itemId") or reasoning_id(message_id)  # AG-UI keeps the block's id as the message's
    if not isinstance(item_id, str) or not item_id:
        return None  # reasoning from elsewhere: the API takes reasoning items only by their id
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
    }
    encrypted = meta.get("reasoningEncryptedContent") or part.encrypted_value
    if isinstance(encrypted, str) and encrypted:
        item["encrypted_content"] = encrypted
    return item


def to_openai_responses_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Responses ``tools`` (function tools) for neutral tools."""
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters or {"type": "object", "properties": {}},
            "strict": False,
        }
        for t in tools
    ]
