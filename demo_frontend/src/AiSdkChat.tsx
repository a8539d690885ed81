// The AI SDK tab: `useChat` from @ai-sdk/react with a DefaultChatTransport posting to the demo's
// /api/chat route. The assistant's parts are shown as they are folded by the real client; the shared
// state is the `data-state` part the server keeps replacing in place.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import type { UIMessage } from "ai";
import { useMemo, useState } from "react";
import { Composer, Conversation, FrameInspector, StatePanel } from "./components";
import { FrameLog, tappedFetch } from "./frames";
import type { MessageView, PartView, SourceView, ToolState } from "./view";

const ROUTE = "api/chat";

type AnyPart = UIMessage["parts"][number] & Record<string, unknown>;

function toolState(state: unknown): ToolState {
  switch (state) {
    case "input-streaming":
    case "input-available":
    case "output-available":
    case "output-error":
      return state;
    case "output-denied":
      return "output-error";
    default:
      return "input-available";
  }
}

export function toView(messages: UIMessage[]): MessageView[] {
  const out: MessageView[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const parts: PartView[] = [];
    const sources: SourceView[] = [];
    message.parts.forEach((raw, i) => {
      const part = raw as AnyPart;
      const key = `${message.id}-${i}`;
      if (part.type === "text") {
        parts.push({ kind: "text", key, text: String(part.text ?? ""), streaming: part.state === "streaming" });
      } else if (part.type === "reasoning") {
        parts.push({ kind: "reasoning", key, text: String(part.text ?? ""), streaming: part.state === "streaming" });
      } else if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
        const name = part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice(5);
        parts.push({
          kind: "tool",
          key: String(part.toolCallId ?? key),
          id: String(part.toolCallId ?? ""),
          name,
          state: toolState(part.state),
          input: part.input,
          output: part.output,
          errorText: part.state === "output-denied" ? "denied" : (part.errorText as string | undefined),
        });
      } else if (part.type === "source-url") {
        sources.push({ id: String(part.sourceId), url: String(part.url), title: part.title as string | undefined });
      } else if (part.type === "source-document") {
        sources.push({ id: String(part.sourceId), title: String(part.title) });
      }
    });
    if (sources.length) parts.push({ kind: "sources", key: `${message.id}-sources`, sources });
    out.push({ id: message.id, role: message.role === "user" ? "user" : "assistant", parts });
  }
  return out;
}

function latestState(messages: UIMessage[]): unknown {
  for (let m = messages.length - 1; m >= 0; m--) {
    const parts = messages[m].parts;
    for (let i = parts.length - 1; i >= 0; i--) {
      const part = parts[i] as AnyPart;
      if (part.type === "data-state") return part.data;
    }
  }
  return undefined;
}

export function AiSdkChat() {
  const log = useMemo(() => new FrameLog(), []);
  const transport = useMemo(() => new DefaultChatTransport({ api: ROUTE, fetch: tappedFetch(log) }), [log]);
  const [updates, setUpdates] = useState(0);
  const { messages, sendMessage, status, error, stop } = useChat({
    transport,
    onData: (part) => {
      if (part.type === "data-state") setUpdates((n) => n + 1);
    },
  });
  const view = useMemo(() => toView(messages), [messages]);
  const state = useMemo(() => latestState(messages), [messages]);
  const busy = status === "submitted" || status === "streaming";
  return (
    <div className="workspace">
      <main className="chat">
        <Conversation
          messages={view}
          busy={busy}
          error={error?.message}
          onPick={(prompt) => void sendMessage({ text: prompt })}
        />
        <Composer
          busy={busy}
          onSend={(text) => void sendMessage({ text })}
          onStop={() => void stop()}
          placeholder="Message the agent through useChat…"
        />
      </main>
      <aside className="side">
        <StatePanel state={state} updates={updates} how="data-state part" />
        <FrameInspector log={log} route={`POST /${ROUTE}`} />
      </aside>
    </div>
  );
}
