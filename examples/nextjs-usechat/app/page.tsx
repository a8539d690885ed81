"use client";
// useChat against a streamkit server. By default it posts to /api/chat on this origin, which
// next.config.mjs proxies to the Python server; with NEXT_PUBLIC_STREAMKIT_URL set at build time it calls
// that origin directly (start the server with CORS for this page's origin).
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type UIMessage } from "ai";
import { useMemo, useState } from "react";

const direct = process.env.NEXT_PUBLIC_STREAMKIT_URL;

type Part = UIMessage["parts"][number];
type ToolPart = Extract<Part, { toolCallId: string }> & { state: string; input?: unknown; output?: unknown; errorText?: string };

function isTool(part: Part): part is ToolPart {
  return part.type === "dynamic-tool" || part.type.startsWith("tool-");
}

function ToolCard({ part }: { part: ToolPart }) {
  const name = part.type === "dynamic-tool" ? (part as { toolName: string }).toolName : part.type.slice(5);
  return (
    <div className="tool" data-testid="tool" data-state={part.state} data-name={name}>
      <span className="state">{part.state}</span>
      <strong>{name}</strong>
      {part.input !== undefined && <pre>{JSON.stringify(part.input)}</pre>}
      {part.state === "output-available" && <pre data-testid="tool-output">{JSON.stringify(part.output)}</pre>}
      {part.state === "output-error" && <pre>{part.errorText}</pre>}
    </div>
  );
}

function Message({ message }: { message: UIMessage }) {
  return (
    <div className={`message ${message.role}`} data-testid={`message-${message.role}`}>
      {message.parts.map((part, i) => {
        if (part.type === "text") return <span key={i} data-testid="text">{part.text}</span>;
        if (part.type === "reasoning") return <div key={i} className="reasoning">{part.text}</div>;
        if (isTool(part)) return <ToolCard key={part.toolCallId} part={part} />;
        if (part.type === "source-url")
          return (
            <div key={i}>
              <a href={part.url}>{part.title ?? part.url}</a>
            </div>
          );
        return null; // data-state is shown in the side panel; other parts are not rendered here
      })}
    </div>
  );
}

function latestState(messages: UIMessage[]): unknown {
  for (const message of [...messages].reverse())
    for (const part of [...message.parts].reverse()) if (part.type === "data-state") return part.data;
  return undefined;
}

export default function Page() {
  const transport = useMemo(
    () => new DefaultChatTransport({ api: direct ? `${direct}/api/chat` : "/api/chat" }),
    [],
  );
  const { messages, sendMessage, status, stop, error } = useChat({ transport });
  const [input, setInput] = useState("");
  const state = latestState(messages);

  return (
    <main>
      <h1>streamkit + useChat</h1>
      {messages.map((m) => (
        <Message key={m.id} message={m} />
      ))}
      {error && <div data-testid="error">{error.message}</div>}
      {state !== undefined && (
        <div className="state-panel" data-testid="state">
          <strong>Shared state</strong>
          <pre>{JSON.stringify(state, null, 2)}</pre>
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!input.trim()) return;
          void sendMessage({ text: input });
          setInput("");
        }}
      >
        <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask something" aria-label="message" />
        {status === "streaming" || status === "submitted" ? (
          <button type="button" onClick={() => void stop()}>Stop</button>
        ) : (
          <button type="submit">Send</button>
        )}
      </form>
      <p data-testid="status" hidden>{status}</p>
    </main>
  );
}
