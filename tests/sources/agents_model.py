"""A scripted Agents SDK ``Model`` (the SDK's own extension point for models): each call streams one
scripted turn as the real ``openai.types.responses`` stream events a Responses API model sends (item added,
reasoning summary / output text / function-call argument deltas, item done, ``response.completed`` with
the whole output and usage), parallel calls' argument deltas interleaved; or raises a scripted exception."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseTextDeltaEvent,
)
from openai.types.responses.response_reasoning_item import Summary


@dataclass
class Reasoning:
    pieces: list[str]
    encrypted: str | None = None


@dataclass
class Text:
    pieces: list[str]


@dataclass
class Call:
    call_id: str
    name: str
    pieces: list[str]


@dataclass
class ScriptedModel(Model):
    """Plays ``turns`` in order, one per model call (a list of :class:`Reasoning` / :class:`Text` /
    :class:`Call`, consecutive calls streaming in parallel; or an exception to raise); ``inputs`` keeps the
    input items each call received."""

    turns: list[Any]
    inputs: list[Any] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=itertools.count)

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the source always streams")

    async def stream_response(  # type: ignore[override]
        self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.inputs.append(input)
        turn = self.turns.pop(0)
        if isinstance(turn, BaseException):
            raise turn
        n = len(self.inputs)
        seq = self._seq
        response = _response(f"resp_{n}", [])
        yield ResponseCreatedEvent(type="response.created", sequence_number=next(seq), response=response)
        output: list[Any] = []
        blocks = _group(turn)
        for block in blocks:
            if isinstance(block, Reasoning):
                rid = f"rs_{n}_{len(output)}"
                i = len(output)
                item = ResponseReasoningItem(id=rid, summary=[], type="reasoning")
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added", item=item, output_index=i, sequence_number=next(seq)
                )
                for piece in block.pieces:
                    yield ResponseReasoningSummaryTextDeltaEvent(
                        type="response.reasoning_summary_text.delta",
                        item_id=rid,
                        output_index=i,
                        summary_index=0,
                        delta=piece,
                        sequence_number=next(seq),
                    )
                done = ResponseReasoningItem(
                    id=rid,
                    summary=[Summary(text="".join(block.pieces), type="summary_text")],
                    type="reasoning",
                    encrypted_content=block.encrypted,
                )
                output.append(done)
                yield ResponseOutputItemDoneEvent(
                    type="response.output_item.done", item=done, output_index=i, sequence_number=next(seq)
                )
            elif isinstance(block, Text):
                mid = f"msg_{n}_{len(output)}"
                i = len(output)
                item = ResponseOutputMessage(id=mid, content=[], role="assistant", status="in_progress", type="message")
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added", item=item, output_index=i, sequence_number=next(seq)
                )
                for piece in block.pieces:
                    yield ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=mid,
                        output_index=i,
                        content_index=0,
                        delta=piece,
                        logprobs=[],
                        sequence_number=next(seq),
                    )
                text = ResponseOutputText(type="output_text", text="".join(block.pieces), annotations=[])
                done = ResponseOutputMessage(
                    id=mid, content=[text], role="assistant", status="completed", type="message"
                )
                output.append(done)
                yield ResponseOutputItemDoneEvent(
                    type="response.output_item.done", item=done, output_index=i, sequence_number=next(seq)
                )
            else:  # parallel calls: all added, argument deltas round robin, all done
                first = len(output)
                for k, call in enumerate(block):
                    item = ResponseFunctionToolCall(
                        id=f"fc_{call.call_id}",
                        call_id=call.call_id,
                        name=call.name,
                        arguments="",
                        type="function_call",
                        status="in_progress",
                    )
                    yield ResponseOutputItemAddedEvent(
                        type="response.output_item.added",
                        item=item,
                        output_index=first + k,
                        sequence_number=next(seq),
                    )
                queues = [list(c.pieces) for c in block]
                while any(queues):
                    for k, queue in enumerate(queues):
                        if queue:
                            yield ResponseFunctionCallArgumentsDeltaEvent(
                                type="response.function_call_arguments.delta",
                                item_id=f"fc_{block[k].call_id}",
                                output_index=first + k,
                                delta=queue.pop(0),
                                sequence_number=next(seq),
                            )
                for k, call in enumerate(block):
                    done = ResponseFunctionToolCall(
                        id=f"fc_{call.call_id}",
                        call_id=call.call_id,
                        name=call.name,
                        arguments="".join(call.pieces),
                        type="function_call",
                        status="completed",
                    )
                    output.append(done)
                    yield ResponseOutputItemDoneEvent(
                        type="response.output_item.done",
                        item=done,
                        output_index=first + k,
                        sequence_number=next(seq),
                    )
        yield ResponseCompletedEvent(
            type="response.completed", sequence_number=next(seq), response=_response(f"resp_{n}", output, usage=True)
        )


def _group(turn: list[Any]) -> list[Any]:
    out: list[Any] = []
    for block in turn:
        if isinstance(block, Call):
            if out and isinstance(out[-1], list):
                out[-1].append(block)
            else:
                out.append([block])
        else:
            out.append(block)
    return out


def _response(rid: str, output: list[Any], *, usage: bool = False) -> Response:
    data: dict[str, Any] = {
        "id": rid,
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "scripted",
        "output": [o.model_dump() for o in output],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed" if usage else "in_progress",
    }
    if usage:
        data["usage"] = {
            "input_tokens": 20,
            "output_tokens": 10,
            "total_tokens": 30,
            "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 2},
        }
    return Response.model_validate(data)


__all__ = ["Call", "Reasoning", "ScriptedModel", "Text", "Usage"]
