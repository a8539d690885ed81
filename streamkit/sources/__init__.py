"""Sources: somebody else's stream in, ``ChatEvent``s out.

A source makes a foreign agent core plug into streamkit without hand-written mapping: a model provider's
SDK stream (OpenAI, Anthropic, Ollama), an agent framework, or another protocol's server. Every provider
source has the same three parts:

1. **input**: ``RunInput`` (the neutral history, the client's frontend tools, context) -> the provider's
   request messages and tool specs;
2. **a pure stream translator**: a per-run state machine, provider event in, ``ChatEvent``\\ s out
   (``feed(event) -> list[ChatEvent]``, ``close() -> list[ChatEvent]``), wrapped by an async function
   (``streamkit.sources.openai.chat_events`` and the like) that yields a well-formed run on its own;
3. **an Agent** over the user's own client object, running the model with server-side tools through the
   one shared tool loop (:mod:`streamkit.sources.loop`).

Shared pieces: :mod:`streamkit.sources.tools` (server tools: plain Python callables with a JSON schema) and
:mod:`streamkit.sources.loop` (the translator base, the stream wrapper and the tool loop). Sources depend on
:mod:`streamkit.events` only, never on a protocol mapping, the routes or the SSE writer. Provider SDKs are
optional extras (``streamkit[openai]``, ``[anthropic]``, ``[ollama]``); this package imports none of them.
"""
