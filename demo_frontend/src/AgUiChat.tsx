// The AG-UI tab: an HttpAgent from @ag-ui/client posting RunAgentInput to the demo's /api/agui route.
// Messages and state are what the client's own reducers build (STATE_SNAPSHOT / STATE_DELTA patches);
// sources arrive as CUSTOM "streamkit.source" events.
// Human in the loop: a run that ends with an interrupt outcome (one interrupt per call needing approval)
// shows Approve / Deny on the call's card; once every interrupt is answered the page runs the agent again
// with `resume` (resolved / cancelled). The page's frontend tool (set_theme, listed in `tools`) is run here
// when a run leaves its call pending: the page appends the tool message and runs the agent again.
// Stop detaches the client from the run before aborting the request, so it ends as a stop, not an error.
import { HttpAgent } from "@ag-ui/client";
import type { AgentSubscriber, Message, RunAgentParameters } from "@ag-ui/client";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ApprovalContext, Composer, Conversation, FrameInspector, StatePanel } from "./components";
import { FrameLog, tappedFetch } from "./frames";
import { SET_THEME_TOOL, runSetTheme } from "./theme";
import { maybeJson } from "./view";
import type { MessageView, PartView, RunEnd, SourceView, ToolState } from "./view";

interface PendingInterrupt {
  id: string;
  reason: string;
  toolCallId?: string;
  message?: string;
}

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

function toView(
  messages: readonly Message[],
  open: ReadonlySet<string>,
  sources: ReadonlyMap<string, SourceView[]>,
  interrupts: readonly PendingInterrupt[],
  answers: ReadonlyMap<string, boolean>,
): MessageView[] {
  const asked = new Map(interrupts.filter((i) => i.toolCallId).map((i) => [i.toolCallId as string, i]));
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
      const interrupt = asked.get(call.id);
      if (interrupt) state = answers.has(interrupt.id) ? "approval-responded" : "approval-requested";
      if (result) state = meta.denied === true ? "output-denied" : failed ? "output-error" : "output-available";
      const part: PartView = {
        kind: "tool",
        key: call.id,
        id: call.id,
        name: call.function.name,
        state,
        input: maybeJson(call.function.arguments),
        output: result && !failed ? maybeJson(textOf(result.content)) : undefined,
        errorText: failed ? (typeof result?.error === "string" ? (result.error as string) : textOf(result?.content)) : undefined,
        approval: interrupt && { id: interrupt.id, reason: interrupt.message, approved: answers.get(interrupt.id) },
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
  const [ended, setEnded] = useState<RunEnd>(undefined);
  const [interrupts, setInterrupts] = useState<PendingInterrupt[]>([]);
  const [answers, setAnswers] = useState<Map<string, boolean>>(new Map());
  const stopped = useRef(false);
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
      onRunErrorEvent: ({ event }) => {
        if (event.code === "abort") setEnded("stopped"); // the client's own abort: a stop, not an error
        else {
          setError(event.message);
          setEnded("failed");
        }
      },
      onRunFinalized: () => {
        open.current.clear();
        touch();
      },
    };
    const { unsubscribe } = agent.subscribe(subscriber);
    return unsubscribe;
  }, [agent]);

  // One user turn: run, then run again for as long as the page has frontend tool results to send back.
  const run = async (parameters: RunAgentParameters) => {
    setError(undefined);
    setEnded(undefined);
    setInterrupts([]);
    stopped.current = false;
    setBusy(true);
    try {
      let next: RunAgentParameters | null = parameters;
      for (let round = 0; next && round < 5; round++) {
        let pending: string[] = [];
        await agent.runAgent(
          { ...next, tools: [SET_THEME_TOOL] },
          {
            onRunFinishedEvent: (params) => {
              if (params.outcome === "success") pending = params.pendingToolCallIds ?? [];
            },
          },
        );
        next = null;
        if (stopped.current) break;
        const calls = agent.messages
          .flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []))
          .filter((c) => pending.includes(c.id) && c.function.name === SET_THEME_TOOL.name);
        for (const call of calls) {
          const result = runSetTheme(maybeJson(call.function.arguments));
          agent.addMessage({ id: newId(), role: "tool", toolCallId: call.id, content: JSON.stringify(result) });
          next = {};
        }
      }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (!/abort/i.test(message)) {
        setError(message);
        setEnded("failed");
      }
    } finally {
      setBusy(false);
      setMessages([...agent.messages]);
      setInterrupts([...(agent.pendingInterrupts as PendingInterrupt[])]);
      setAnswers(new Map());
    }
  };

  const send = async (text: string) => {
    const id = newId();
    turnKey.current = id;
    // a new message answers what is still pending: the client refuses a run that leaves an interrupt open
    const resume = agent.pendingInterrupts.map((i) => ({ interruptId: i.id, status: "cancelled" as const }));
    agent.addMessage({ id, role: "user", content: text });
    setMessages([...agent.messages]);
    await run(resume.length ? { resume } : {});
  };

  const decide = useCallback(
    (toolCallId: string, approved: boolean) => {
      const interrupt = interrupts.find((i) => i.toolCallId === toolCallId);
      if (!interrupt) return;
      const given = new Map(answers).set(interrupt.id, approved);
      setAnswers(given);
      if (!interrupts.every((i) => given.has(i.id))) return;
      const resume = interrupts.map((i) =>
        given.get(i.id)
          ? { interruptId: i.id, status: "resolved" as const, payload: { approved: true } }
          : { interruptId: i.id, status: "cancelled" as const },
      );
      void run({ resume });
    },
    [interrupts, answers],
  );

  const stop = async () => {
    stopped.current = true;
    setEnded("stopped");
    await agent.detachActiveRun(); // the client lets go of the run first: no client-side abort error
    agent.abortRun(); // then the request is cancelled, and the server stops the agent
  };

  const view = toView(messages, open.current, sources.current, interrupts, answers);
  return (
    <div className="workspace">
      <main className="chat">
        <ApprovalContext.Provider value={decide}>
          <Conversation messages={view} busy={busy} error={error} onPick={(p) => void send(p)} />
        </ApprovalContext.Provider>
        <Composer
          busy={busy}
          onSend={(text) => void send(text)}
          onStop={() => void stop()}
          placeholder="Message the agent through HttpAgent…"
        />
      </main>
      <aside className="side">
        <StatePanel state={state} updates={updates} how="STATE_SNAPSHOT / STATE_DELTA" ended={busy ? undefined : ended} />
        <FrameInspector log={log} route={`POST /${ROUTE}`} />
      </aside>
    </div>
  );
}
