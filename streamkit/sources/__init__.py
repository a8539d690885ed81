"""Sources: somebody else's stream in, ``ChatEvent``\\ s out.

A source makes a foreign agent core plug into streamkit without hand-written mapping: a model provider's
SDK stream (OpenAI, Anthropic, Ollama), an agent framework (LangGraph, pydantic-ai, the OpenAI Agents SDK),
or another protocol's server (AG-UI, the AI SDK). Every source has the same parts, under the same names;
``<X>`` is the source's name as its agent has it (``OpenAIChat``, ``OpenAIResponses``, ``Anthropic``,
``Ollama``, ``LangGraph``, ``PydanticAI``, ``AgentsSDK``, ``AGUI``, ``AISDK``) and ``<x>`` the same in
snake case (``openai_chat``, ``anthropic``, ``pydantic_ai``, ``agents_sdk``, ``aisdk``...):

1. **input** ``to_<x>_messages``: ``RunInput`` (the neutral history) -> the provider's message list, and,
   where the provider takes tool specs, ``to_<x>_tools``: the neutral tools -> its specs. A protocol
   source's input is the whole request body the server reads, ``to_<x>_request`` (``to_agui_request``,
   ``to_aisdk_request``; Anthropic has one too: the Messages request's ``system``, ``messages``, ``tools``);
2. **a pure translator** ``<X>Translator``: a per-run (or per-model-call) state machine, provider event in,
   ``ChatEvent``\\ s out (``feed(event) -> list[ChatEvent]``, ``close() -> list[ChatEvent]``). One whose
   stream names its event types dispatches by a ``_HANDLERS`` table (type -> a small method that appends
   to the output list); one whose chunks are all of one kind (Chat Completions, Ollama) reads each chunk's
   fields in turn; the pydantic-ai and Agents SDK translators dispatch by the SDK's event class (subclasses
   included) to small methods;
3. **a run wrapper** ``<x>_events(stream)``: the translator driven over a stream already in hand (an async
   or a sync iterable), yielding a well-formed run on its own. The frameworks have none: their agent runs
   the framework;
4. **an agent** ``<X>Agent`` (a protocol source's: ``Remote<X>Agent``) over the user's own client object.
   The model providers' agents run the model with server-side tools through the one shared tool loop
   (:mod:`streamkit.sources.loop`); the frameworks run their own loop; the protocol sources share
   :mod:`streamkit.sources.remote`.

The names the sources had before this vocabulary stay importable from their modules, as aliases listed
in each ``__all__``: ``openai``'s ``chat_events``, ``chat_messages``, ``chat_tools``, ``ChatTranslator``,
``responses_events``, ``responses_input``, ``responses_tools``, ``ResponsesTranslator``; ``anthropic``'s
``message_events``; ``ollama``'s ``chat_events``; ``langgraph``'s ``to_messages``, ``GraphTranslator``;
``pydantic_ai``'s ``to_model_messages``, ``EventTranslator``; ``openai_agents``'s ``to_input_items``,
``RunTranslator``; ``agui``'s ``chat_events``, ``to_run_agent_input``; ``aisdk``'s ``chat_events``,
``to_chat_request``.

Shared pieces: :mod:`streamkit.sources.tools` (server tools: plain Python callables with a JSON schema, and
the function specs Chat Completions and Ollama take), :mod:`streamkit.sources.loop` (the translator base,
the stream wrapper, :func:`~streamkit.sources.loop.aiter_of` and the tool loop),
:mod:`streamkit.sources.history` (the causal-history rules: an assistant turn split into steps, the answer
of a missing or denied result) and :mod:`streamkit.sources.remote` (the protocol servers' transport and
frame readers).

Sources depend on :mod:`streamkit.events`, and the protocol sources on their protocol's request and message
models (:mod:`streamkit.agui.request`, :mod:`streamkit.agui.messages`, :mod:`streamkit.aisdk.request`); never
on a protocol mapping, the routes or the SSE writer. Provider SDKs are optional extras
(``streamkit[openai]``, ``[anthropic]``, ``[ollama]``); this package imports none of them.
"""
