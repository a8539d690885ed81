// The AG-UI tab: an HttpAgent from @ag-ui/client posting RunAgentInput to the demo's /api/agui route.
// Messages and state are what the client's own reducers build (STATE_SNAPSHOT / STATE_DELTA patches);
// sources arrive as CUSTOM "streamkit.source" events.
import { HttpAgent } from "@ag-ui/client";
import type { AgentSubscriber, Message } from "@ag-ui/client";
import { useEffect, useMemo, useRef, useState } from "react";
import { Composer, Conversation, FrameInspector, StatePanel } from "./components";
import { FrameLog, tappedFetch } from "./frames";
import { maybeJson } from "./view";
import type { MessageView, PartView, SourceView, ToolState } from "./view";

const ROUTE = "api/agui";

function newId(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  return `id-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

type Loose = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((p) => (p && typeof p === "object" && (p as Loose).type === "text" ? String((p as Loose).text) : "")).join("");
  return "";
}

function toView(messages: readonly Message[], open: ReadonlySet<string>, sources: ReadonlyMap<string, SourceView[]>): MessageView[] {
  const results = new Map<string, Loose>();
  for (const m of messages) if (m.role === "tool") results.set((m as Loose).toolCallId as string, m as Loose);
  const out: MessageView[] = [];
  let turn: MessageView | null = null;
  let turnKey = "";
  const closeTurn = () => {
    const found = sources.get(turnKey);
    if (turn && found?.length) turn.parts.push({ kind: "sources", key: `${turn.id}-sources`, sources: found });
  };
  for (const raw of messages) {
    const m = raw as Loose & Message;
    if (m.role === "user") {
      closeTurn();
      out.push({ id: m.id, role: "user", parts: [{ kind: "text", key: m.id, text: textOf(m.content), streaming: false }] });
      turn = null;
      turnKey = m.id;
      continue;
    }
    if (m.role !== "assistant" && m.role !== "reasoning") continue;
    if (!turn) {
      turn = { id: `turn-${m.id}`, role: "assistant", parts: [] };
      out.push(turn);
    }
    if (m.role === "reasoning") {
      turn.parts.push({ kind: "reasoning", key: m.id, text: textOf(m.content), streaming: open.has(m.id) });
      continue;
    }
    const content = textOf(m.content);
    if (content) turn.parts.push({ kind: "text", key: m.id, text: content, streaming: open.has(m.id) });
    for (const call of (m.toolCalls as { id: string; function: { name: string; arguments: string } }[] | undefined) ?? []) {
      const result = results.get(call.id);
      // streamkit marks a failed (or denied) call on the tool message's metadata; `error` is the message field
      const meta = (result?.metadata as Loose | undefined) ?? {};
      const ours = (meta.streamkit as Loose | undefined) ?? {};
      const failed =
        !!result &&
        (meta.isError === true || meta.denied === true || ours.error === true || typeof result.error === "string");
      let state: ToolState = open.has(call.id) ? "input-streaming" : "input-available";
      if (result) state = failed ? "output-error" : "output-available";
      const part: PartView = {
        kind: "tool",
        key: call.id,
        id: call.id,
        name: call.function.name,
        state,
        input: maybeJson(call.function.arguments),
        output: result && !failed ? maybeJson(textOf(result.content)) : undefined,
        errorText: failed ? (typeof result?.error === "string" ? (result.error as string) : textOf(result?.content)) : undefined,
      };
      turn.parts.push(part);
    }
  }
  closeTurn();
  return out;
}

export function AgUiChat() {
  const log = useMemo(() => new FrameLog(), []);
  const agent = useMemo(() => new HttpAgent({ url: ROUTE, fetch: tappedFetch(log) }), [log]);
  const [messages, setMessages] = useState<readonly Message[]>([]);
  const [state, setState] = useState<unknown>(undefined);
  const [updates, setUpdates] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [, setVersion] = useState(0);
  const open = useRef(new Set<string>());
  const sources = useRef(new Map<string, SourceView[]>());
  const turnKey = useRef("");

  useEffect(() => {
    const touch = () => setVersion((v) => v + 1);
    const opened = (id: string) => {
      open.current.add(id);
      touch();
    };
    const closed = (id: string) => {
      open.current.delete(id);
      touch();
    };
    const subscriber: AgentSubscriber = {
      onMessagesChanged: ({ messages }) => setMessages([...messages]),
      onStateChanged: ({ state }) => setState(state),
      onStateSnapshotEvent: () => setUpdates((n) => n + 1),
      onStateDeltaEvent: () => setUpdates((n) => n + 1),
      onTextMessageStartEvent: ({ event }) => opened(event.messageId),
      onTextMessageEndEvent: ({ event }) => closed(event.messageId),
      onReasoningMessageStartEvent: ({ event }) => opened(event.messageId),
      onReasoningMessageEndEvent: ({ event }) => closed(event.messageId),
      onToolCallStartEvent: ({ event }) => opened(event.toolCallId),
      onToolCallEndEvent: ({ event }) => closed(event.toolCallId),
      onCustomEvent: ({ event }) => {
        if (event.name !== "streamkit.source" || !event.value || typeof event.value !== "object") return;
        const value = event.value as Loose;
        const list = sources.current.get(turnKey.current) ?? [];
        list.push({ id: String(value.id), url: value.url as string | undefined, title: value.title as string | undefined });
        sources.current.set(turnKey.current, list);
        touch();
      },
      onRunErrorEvent: ({ event }) => setError(event.message),
      onRunFinalized: () => {
        open.current.clear();
        touch();
      },
    };
    const { unsubscribe } = agent.subscribe(subscriber);
    return unsubscribe;
  }, [agent]);

  const send = async (text: string) => {
    const id = newId();
    turnKey.current = id;
    agent.addMessage({ id, role: "user", content: text });
    setMessages([...agent.messages]);
    setError(undefined);
    setBusy(true);
    try {
      await agent.runAgent();
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (!/abort/i.test(message)) setError(message);
    } finally {
      setBusy(false);
      setMessages([...agent.messages]);
    }
  };

  const view = toView(messages, open.current, sources.current);
  return (
    <div className="workspace">
      <main className="chat">
        <Conversation messages={view} busy={busy} error={error} onPick={(p) => void send(p)} />
        <Composer
          busy={busy}
          onSend={(text) => void send(text)}
          onStop={() => agent.abortRun()}
          placeholder="Message the agent through HttpAgent…"
        />
      </main>
      <aside className="side">
        <StatePanel state={state} updates={updates} how="STATE_SNAPSHOT / STATE_DELTA" />
        <FrameInspector log={log} route={`POST /${ROUTE}`} />
      </aside>
    </div>
  );
}
