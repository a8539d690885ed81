// The console tab: the named-event dialect (meta / chunk / reasoning / step_break / done / error) read by the
// plain client in dsh.ts (fetch and a small SSE reader, no framework client). Bubbles split at every
// step_break, tool cards sit between them, a bubble's reasoning shows as the other tabs show it (a collapsible
// "Thinking" block above its answer), and `done.messages` rebuilds the whole conversation at the end.
import { useMemo, useRef, useState } from "react";
import { Composer, Conversation, FrameInspector, StatePanel } from "./components";
import { DshConsole, streamAgent } from "./dsh";
import type { Card, Turn } from "./dsh";
import { FrameLog, tappedFetch } from "./frames";
import type { MessageView, PartView, ToolState } from "./view";

const ROUTE = "api/agent";

const STATES: Record<Card["status"], ToolState> = {
  started: "input-available",
  done: "output-available",
  error: "output-error",
};

function toView(turns: Turn[], streaming: boolean): MessageView[] {
  return turns.map((turn, t) => {
    const last = streaming && t === turns.length - 1;
    const parts: PartView[] = [];
    turn.items.forEach((item, i) => {
      if (item.kind === "bubble") {
        const open = last && i === turn.items.length - 1;
        if (item.reasoning) parts.push({ kind: "reasoning", key: `${item.key}-r`, text: item.reasoning, streaming: open && !item.text });
        if (item.text || turn.role === "user") parts.push({ kind: "text", key: item.key, text: item.text, streaming: open });
      } else {
        const c = item.card;
        parts.push({
          kind: "tool",
          key: item.key,
          id: c.callId,
          name: c.toolName,
          state: STATES[c.status],
          input: c.args,
          output: c.result,
          errorText: c.error,
        });
      }
    });
    return { id: turn.id, role: turn.role, parts };
  });
}

function newAgentId(): string {
  const random = typeof crypto !== "undefined" && "randomUUID" in crypto ? crypto.randomUUID() : `${Date.now()}`;
  return `console-${random.slice(0, 8)}`;
}

export function DshChat() {
  const log = useMemo(() => new FrameLog(), []);
  const fetcher = useMemo(() => tappedFetch(log), [log]);
  const agentId = useMemo(newAgentId, []);
  const state = useRef(new DshConsole());
  const [, setVersion] = useState(0);
  const [busy, setBusy] = useState(false);
  const [runs, setRuns] = useState(0);
  const [failure, setFailure] = useState<string | undefined>();
  const touch = () => setVersion((v) => v + 1);

  const send = async (text: string) => {
    state.current.ask(text);
    setFailure(undefined);
    setBusy(true);
    touch();
    try {
      await streamAgent(ROUTE, { agentId, message: text }, (frame) => {
        state.current.apply(frame);
        touch();
      }, fetcher);
    } catch (e) {
      setFailure(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
      setRuns((n) => n + 1);
      touch();
    }
  };
  const cancel = () => void fetcher(`${ROUTE}/${encodeURIComponent(agentId)}/cancel`, { method: "POST" });

  const c = state.current;
  const view = toView(c.turns, busy);
  const done = c.done;
  const lastAnswer = [...view].reverse().find((m) => m.role === "assistant");
  if (done?.sources?.length && lastAnswer) lastAnswer.parts.push({ kind: "sources", key: "done-sources", sources: done.sources });
  return (
    <div className="workspace">
      <main className="chat" data-testid="dsh-console" data-rebuilt={c.rebuilt} data-step-breaks={c.stepBreaks} data-runs={runs}>
        <Conversation messages={view} busy={busy} error={c.error ?? failure} onPick={(p) => void send(p)} />
        {done && (
          <div className="muted dsh-done" data-testid="dsh-done" data-finish={String(done.finishReason)}>
            done · {String(done.finishReason)} · rebuilt from {(done.messages ?? []).length} messages
          </div>
        )}
        <Composer busy={busy} onSend={(t) => void send(t)} onStop={cancel} placeholder="Message the agent console…" />
      </main>
      <aside className="side">
        <StatePanel state={done?.state} updates={done && "state" in done ? 1 : 0} how="done.state (final only)" />
        <FrameInspector log={log} route={`POST /${ROUTE}/stream · agentId ${agentId}`} />
      </aside>
    </div>
  );
}
