// The building blocks both tabs share: conversation, reasoning, tool cards, sources, composer, the state
// panel and the frame inspector.
import { createContext, useContext, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from "react";
import type { FormEvent, KeyboardEvent } from "react";
import type { Frame, FrameLog } from "./frames";
import { Markdown } from "./markdown";
import type { MessageView, PartView, RunEnd, SourceView, ToolState } from "./view";

/** What a tab does when the user answers an approval card (approve or deny the call `toolCallId`). */
export const ApprovalContext = createContext<((toolCallId: string, approved: boolean) => void) | null>(null);

export const SUGGESTIONS: { label: string; prompt: string }[] = [
  { label: "Say hi", prompt: "Hi there!" },
  { label: "One tool call", prompt: "What's the weather in Lisbon?" },
  { label: "Parallel tools", prompt: "Compare the weather in Paris, Tokyo and New York" },
  { label: "Tool failure", prompt: "What is 1/0?" },
  { label: "Sources", prompt: "What is AG-UI?" },
  { label: "Long answer", prompt: "Tell me a long story" },
  { label: "Agent error", prompt: "crash" },
  { label: "Approval", prompt: "Delete the file notes.txt" },
  { label: "Frontend tool", prompt: "Switch to dark mode" },
];

function pretty(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    const flat = JSON.stringify(value);
    // short values on one line, longer ones indented
    if (flat.length <= 110) return JSON.stringify(value, null, 1).replace(/\n\s*/g, " ");
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// --- conversation --------------------------------------------------------------------------------

export function Conversation({
  messages,
  busy,
  error,
  onPick,
}: {
  messages: MessageView[];
  busy: boolean;
  error?: string;
  onPick: (prompt: string) => void;
}) {
  const end = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  useLayoutEffect(() => {
    if (stick.current) end.current?.scrollIntoView({ block: "end" });
  });
  const onScroll = () => {
    const el = box.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };
  const last = messages[messages.length - 1];
  const waiting = busy && (!last || last.role === "user" || last.parts.length === 0);
  return (
    <div className="conversation" ref={box} onScroll={onScroll} data-testid="conversation">
      {messages.length === 0 && <EmptyState onPick={onPick} />}
      {messages.map((m) => (
        <MessageBlock key={m.id} message={m} />
      ))}
      {waiting && (
        <div className="message assistant">
          <div className="avatar">sk</div>
          <div className="bubble typing" aria-label="waiting for the first frame">
            <span />
            <span />
            <span />
          </div>
        </div>
      )}
      {error && (
        <div className="error-banner" role="alert" data-testid="run-error">
          <strong>Run error</strong> {error}
        </div>
      )}
      <div ref={end} />
    </div>
  );
}

function EmptyState({ onPick }: { onPick: (prompt: string) => void }) {
  return (
    <div className="empty">
      <h2>Ask the agent something</h2>
      <p>Each prompt below takes a different path through the agent, so every part of the stream shows up.</p>
      <div className="suggestions large">
        {SUGGESTIONS.map((s) => (
          <button key={s.label} type="button" onClick={() => onPick(s.prompt)}>
            <span className="suggestion-label">{s.label}</span>
            <span className="suggestion-prompt">{s.prompt}</span>
          </button>
        ))}
      </div>
    </div>
  );
}

function MessageBlock({ message }: { message: MessageView }) {
  if (message.role === "user") {
    const text = message.parts.map((p) => (p.kind === "text" ? p.text : "")).join("");
    return (
      <div className="message user" data-testid="message-user">
        <div className="bubble">{text}</div>
      </div>
    );
  }
  return (
    <div className="message assistant" data-testid="message-assistant">
      <div className="avatar">sk</div>
      <div className="assistant-body">
        {message.parts.map((part) => (
          <PartBlock key={part.key} part={part} />
        ))}
      </div>
    </div>
  );
}

function PartBlock({ part }: { part: PartView }) {
  switch (part.kind) {
    case "text":
      return (
        <div className={`answer${part.streaming ? " streaming" : ""}`} data-testid="answer-text">
          <Markdown text={part.text} />
        </div>
      );
    case "reasoning":
      return <Reasoning text={part.text} streaming={part.streaming} />;
    case "tool":
      return <ToolCard {...part} />;
    case "sources":
      return <Sources sources={part.sources} />;
  }
}

function Reasoning({ text, streaming }: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState(streaming);
  const was = useRef(streaming);
  useEffect(() => {
    if (was.current && !streaming) setOpen(false);
    if (!was.current && streaming) setOpen(true);
    was.current = streaming;
  }, [streaming]);
  const words = text.trim() ? text.trim().split(/\s+/).length : 0;
  return (
    <details
      className="reasoning"
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
      data-testid="reasoning"
    >
      <summary>
        <span className="reasoning-title">{streaming ? "Thinking" : "Reasoning"}</span>
        <span className="muted">{streaming ? "…" : `${words} words`}</span>
      </summary>
      <div className="reasoning-text">{text}</div>
    </details>
  );
}

const TOOL_BADGE: Record<ToolState, { text: string; tone: string }> = {
  "input-streaming": { text: "streaming input", tone: "info" },
  "input-available": { text: "running", tone: "warn" },
  "approval-requested": { text: "needs approval", tone: "warn" },
  "approval-responded": { text: "answered", tone: "info" },
  "output-available": { text: "done", tone: "ok" },
  "output-error": { text: "error", tone: "bad" },
  "output-denied": { text: "denied", tone: "bad" },
};

function ApprovalActions({ id, reason, approved }: { id: string; reason?: string; approved?: boolean }) {
  const decide = useContext(ApprovalContext);
  const [sent, setSent] = useState<boolean | undefined>(approved);
  const answer = (value: boolean) => {
    if (sent !== undefined || !decide) return;
    setSent(value);
    decide(id, value);
  };
  return (
    <div className="approval" data-testid="approval">
      <div className="approval-reason">{reason ?? "The agent wants to run this tool. Allow it?"}</div>
      {sent === undefined ? (
        <div className="approval-actions">
          <button type="button" className="approve" onClick={() => answer(true)} data-testid="approve-button">
            Approve
          </button>
          <button type="button" className="deny" onClick={() => answer(false)} data-testid="deny-button">
            Deny
          </button>
        </div>
      ) : (
        <div className="approval-answer muted">{sent ? "Approved: the agent runs it." : "Denied: the agent will not run it."}</div>
      )}
    </div>
  );
}

function ToolCard(props: Extract<PartView, { kind: "tool" }>) {
  const { name, state, input, output, errorText, id, approval } = props;
  const badge = TOOL_BADGE[state];
  const waiting = state === "input-streaming" || state === "input-available" || state === "approval-responded";
  return (
    <details className={`tool-card tone-${badge.tone}`} open data-testid="tool-card" data-state={state} data-tool={name}>
      <summary>
        <span className="tool-icon" aria-hidden>
          ƒ
        </span>
        <span className="tool-name">{name}</span>
        <span className={`badge ${badge.tone}`}>
          {waiting && <span className="spinner" />}
          {badge.text}
        </span>
        <span className="tool-id" title={id}>
          {id}
        </span>
      </summary>
      <div className="tool-body">
        <div className="tool-section">
          <div className="tool-label">Input</div>
          <pre>{pretty(input) || " "}</pre>
        </div>
        {state === "approval-requested" && approval && <ApprovalActions id={id} reason={approval.reason} />}
        {state === "output-denied" && (
          <div className="tool-section">
            <div className="tool-label">Denied</div>
            <pre className="tool-error" data-testid="tool-denied">
              {errorText || "The user denied this call; it did not run."}
            </pre>
          </div>
        )}
        {state === "output-available" && (
          <div className="tool-section">
            <div className="tool-label">Output</div>
            <pre data-testid="tool-output">{pretty(output)}</pre>
          </div>
        )}
        {state === "output-error" && (
          <div className="tool-section">
            <div className="tool-label">Error</div>
            <pre className="tool-error" data-testid="tool-error">
              {errorText}
            </pre>
          </div>
        )}
      </div>
    </details>
  );
}

function Sources({ sources }: { sources: SourceView[] }) {
  return (
    <div className="sources" data-testid="sources">
      <span className="sources-label">Sources</span>
      {sources.map((s, i) => (
        <a key={s.id} className="source" href={s.url} target="_blank" rel="noreferrer" title={s.url}>
          <span className="source-n">{i + 1}</span>
          {s.title ?? s.url ?? s.id}
        </a>
      ))}
    </div>
  );
}

// --- composer ------------------------------------------------------------------------------------

export function Composer({
  busy,
  onSend,
  onStop,
  placeholder,
}: {
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  placeholder: string;
}) {
  const [text, setText] = useState("");
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const value = text.trim();
    if (!value || busy) return;
    onSend(value);
    setText("");
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey) submit(e);
  };
  return (
    <form className="composer" onSubmit={submit}>
      <div className="suggestions compact">
        {SUGGESTIONS.map((s) => (
          <button key={s.label} type="button" disabled={busy} onClick={() => onSend(s.prompt)} title={s.prompt}>
            {s.label}
          </button>
        ))}
      </div>
      <div className="composer-row">
        <textarea
          rows={1}
          value={text}
          placeholder={placeholder}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKey}
          data-testid="composer-input"
          aria-label="Message"
        />
        {busy ? (
          <button type="button" className="stop" onClick={onStop} data-testid="stop-button">
            Stop
          </button>
        ) : (
          <button type="submit" className="send" disabled={!text.trim()} data-testid="send-button">
            Send
          </button>
        )}
      </div>
    </form>
  );
}

// --- state panel ---------------------------------------------------------------------------------

interface PlanStep {
  id: string;
  title: string;
  status: string;
}

function asPlan(state: unknown): { task: string; status: string; steps: PlanStep[] } | null {
  if (!state || typeof state !== "object" || Array.isArray(state)) return null;
  const s = state as Record<string, unknown>;
  if (typeof s.task !== "string" || !Array.isArray(s.steps)) return null;
  const steps = s.steps.filter(
    (x): x is PlanStep => !!x && typeof x === "object" && typeof (x as PlanStep).title === "string",
  );
  return { task: s.task, status: typeof s.status === "string" ? s.status : "", steps };
}

const STEP_ICON: Record<string, string> = {
  pending: "○",
  running: "◔",
  waiting: "⏸",
  done: "✓",
  failed: "✕",
  denied: "⊘",
  stopped: "■",
};
const SETTLED = new Set(["done", "failed", "denied", "stopped"]);

/** The plan as it stands once the run ended: a stopped or failed run leaves nothing "working". */
function settledPlan(plan: ReturnType<typeof asPlan>, ended: RunEnd): ReturnType<typeof asPlan> {
  if (!plan || !ended || SETTLED.has(plan.status)) return plan;
  const steps = plan.steps.map((s) => (s.status === "running" || s.status === "waiting" ? { ...s, status: ended } : s));
  return { ...plan, status: ended, steps };
}

export function StatePanel({
  state,
  updates,
  how,
  ended,
}: {
  state: unknown;
  updates: number;
  how: string;
  ended?: RunEnd;
}) {
  const plan = settledPlan(asPlan(state), ended);
  const empty = state === undefined || state === null || (typeof state === "object" && !plan && Object.keys(state as object).length === 0);
  return (
    <section className="panel state-panel" data-testid="state-panel" data-updates={updates}>
      <header>
        <h3>Shared state</h3>
        <span className="muted">
          {updates} update{updates === 1 ? "" : "s"} · {how}
        </span>
      </header>
      {empty ? (
        <p className="muted placeholder">No state yet. Send a message: the agent streams its plan here.</p>
      ) : plan ? (
        <div className="plan">
          <div className="plan-head">
            <span className="plan-task" data-testid="plan-task">
              {plan.task}
            </span>
            <span
              className={`badge ${plan.status === "done" ? "ok" : plan.status === "failed" || plan.status === "stopped" ? "bad" : plan.status.startsWith("waiting") ? "warn" : "info"}`}
              data-testid="plan-status"
            >
              {plan.status}
            </span>
          </div>
          <ol className="steps">
            {plan.steps.map((step) => (
              <li key={step.id} className={`step ${step.status}`} data-status={step.status}>
                <span className="step-icon">{STEP_ICON[step.status] ?? "•"}</span>
                <span className="step-title">{step.title}</span>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      {!empty && (
        <details className="raw-state">
          <summary>JSON</summary>
          <pre>{pretty(state)}</pre>
        </details>
      )}
    </section>
  );
}

// --- frame inspector -----------------------------------------------------------------------------

const DELTA = /(-delta|_CONTENT|_ARGS|^chunk|^reasoning)$/;

function tone(frame: Frame): string {
  if (frame.kind !== "frame") return frame.kind;
  const t = frame.label.toLowerCase();
  if (t.includes("error")) return "bad";
  if (t.includes("tool")) return "tool";
  if (t.includes("reasoning")) return "reasoning";
  if (t.includes("state") || t.startsWith("data-")) return "state";
  if (t.includes("source") || t === "custom") return "source";
  if (t.includes("text") || t === "chunk") return "text";
  return "life";
}

export function FrameInspector({ log, route }: { log: FrameLog; route: string }) {
  const frames = useSyncExternalStore(log.subscribe, log.getSnapshot);
  const [deltas, setDeltas] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  // Only the user stops the list from following new frames: a scroll event can also come from the list
  // being resized (the state panel above it grows) or from our own scroll, and must not count.
  const touched = useRef(0);
  const held = useRef(false);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [frames, deltas]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const release = () => {
      held.current = false;
    };
    window.addEventListener("pointerup", release);
    const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    resized?.observe(el);
    return () => {
      window.removeEventListener("pointerup", release);
      resized?.disconnect();
    };
  }, []);
  const byHand = () => {
    touched.current = performance.now();
  };
  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 40) stick.current = true;
    else if (held.current || performance.now() - touched.current < 600) stick.current = false;
  };
  const shown = deltas ? frames : frames.filter((f) => !DELTA.test(f.label));
  return (
    <section className="panel inspector" data-testid="frame-log" data-count={log.count}>
      <header>
        <h3>Protocol frames</h3>
        <span className="muted">
          {log.count} frame{log.count === 1 ? "" : "s"} · {route}
        </span>
        <span className="spacer" />
        <label className="toggle">
          <input type="checkbox" checked={deltas} onChange={(e) => setDeltas(e.target.checked)} /> show deltas
        </label>
        <button type="button" className="link" onClick={() => log.clear()}>
          clear
        </button>
      </header>
      <div
        className="frames"
        ref={box}
        tabIndex={0}
        onScroll={onScroll}
        onWheel={byHand}
        onTouchMove={byHand}
        onKeyDown={byHand}
        onPointerDown={() => {
          held.current = true;
          byHand();
        }}
      >
        {shown.length === 0 && <p className="muted placeholder">Raw SSE frames appear here as they arrive.</p>}
        {shown.map((f) => (
          <div key={f.seq} className={`frame kind-${f.kind}`} title={f.text}>
            <span className="frame-at">{f.kind === "request" ? "→" : `+${f.at}ms`}</span>
            <span className={`pill p-${tone(f)}`}>{f.label}</span>
            <span className="frame-text">{f.text}</span>
          </div>
        ))}
      </div>
    </section>
  );
}
