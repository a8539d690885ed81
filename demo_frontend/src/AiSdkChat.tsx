// The AI SDK tab: `useChat` from @ai-sdk/react with a DefaultChatTransport posting to the demo's
// /api/chat route. The assistant's parts are shown as they are folded by the real client; the shared
// state is the `data-state` part the server keeps replacing in place.
// Human in the loop: an approval card answers with addToolApprovalResponse, the page's frontend tool
// (set_theme) runs in onToolCall and answers with addToolOutput; sendAutomaticallyWhen resends either way.
import { useChat } from "@ai-sdk/react";
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";
import type { UIMessage } from "ai";
import { useCallback, useMemo, useRef, useState } from "react";
import { ApprovalContext, Composer, Conversation, FrameInspector, StatePanel } from "./components";
import { FrameLog, tappedFetch } from "./frames";
import { SET_THEME_TOOL, runSetTheme } from "./theme";
import type { MessageView, PartView, RunEnd, SourceView, ToolState } from "./view";

const ROUTE = "api/chat";

type AnyPart = UIMessage["parts"][number] & Record<string, unknown>;

function toolState(state: unknown): ToolState {
  switch (state) {
    case "input-streaming":
    case "input-available":
    case "approval-requested":
    case "approval-responded":
    case "output-available":
    case "output-error":
    case "output-denied":
      return state;
    default:
      return "input-available";
  }
}

/** `live`: a response is streaming (a stopped response leaves its last parts "streaming": shown as ended). */
export function toView(messages: UIMessage[], live = true): MessageView[] {
  const out: MessageView[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const parts: PartView[] = [];
    const sources: SourceView[] = [];
    message.parts.forEach((raw, i) => {
      const part = raw as AnyPart;
      const key = `${message.id}-${i}`;
      if (part.type === "text") {
        parts.push({ kind: "text", key, text: String(part.text ?? ""), streaming: live && part.state === "streaming" });
      } else if (part.type === "reasoning") {
        parts.push({
          kind: "reasoning",
          key,
          text: String(part.text ?? ""),
          streaming: live && part.state === "streaming",
        });
      } else if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
        const name = part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice(5);
        const approval = part.approval as { id: string; approved?: boolean; requestReason?: string } | undefined;
        parts.push({
          kind: "tool",
          key: String(part.toolCallId ?? key),
          id: String(part.toolCallId ?? ""),
          name,
          state: toolState(part.state),
          input: part.input,
          output: part.output,
          errorText: part.errorText as string | undefined,
          approval: approval && { id: approval.id, reason: approval.requestReason, approved: approval.approved },
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

// Resend once every approval of the last step is answered, or every frontend tool call has its output.
function sendAutomaticallyWhen(options: { messages: UIMessage[] }): boolean {
  return lastAssistantMessageIsCompleteWithApprovalResponses(options) || lastAssistantMessageIsCompleteWithToolCalls(options);
}

export function AiSdkChat() {
  const log = useMemo(() => new FrameLog(), []);
  const transport = useMemo(() => new DefaultChatTransport({ api: ROUTE, fetch: tappedFetch(log) }), [log]);
  const [updates, setUpdates] = useState(0);
  const [ended, setEnded] = useState<RunEnd>(undefined);
  const output = useRef<(toolCallId: string, value: unknown) => void>(() => {});
  const { messages, sendMessage, status, error, stop, addToolOutput, addToolApprovalResponse } = useChat({
    transport,
    sendAutomaticallyWhen,
    onData: (part) => {
      if (part.type === "data-state") setUpdates((n) => n + 1);
    },
    onToolCall: ({ toolCall }) => {
      // the page's own tool: run it here and hand the result back (not awaited: see the AI SDK docs)
      if (toolCall.toolName === SET_THEME_TOOL.name) output.current(toolCall.toolCallId, runSetTheme(toolCall.input));
    },
    onFinish: ({ isAbort, isError }) => setEnded(isAbort ? "stopped" : isError ? "failed" : undefined),
    onError: () => setEnded("failed"),
  });
  output.current = (toolCallId, value) => void addToolOutput({ tool: SET_THEME_TOOL.name, toolCallId, output: value });
  const busy = status === "submitted" || status === "streaming";
  const view = useMemo(() => toView(messages, busy), [messages, busy]);
  const state = useMemo(() => latestState(messages), [messages]);
  const decide = useCallback(
    (toolCallId: string, approved: boolean) => {
      const part = messages
        .flatMap((m) => m.parts as AnyPart[])
        .find((p) => p.toolCallId === toolCallId && p.state === "approval-requested");
      const approval = part?.approval as { id: string } | undefined;
      if (approval) {
        setEnded(undefined);
        void addToolApprovalResponse({ id: approval.id, approved });
      }
    },
    [messages, addToolApprovalResponse],
  );
  const send = (text: string) => {
    setEnded(undefined);
    void sendMessage({ text });
  };
  const onStop = () => {
    setEnded("stopped");
    void stop();
  };
  return (
    <div className="workspace">
      <main className="chat">
        <ApprovalContext.Provider value={decide}>
          <Conversation messages={view} busy={busy} error={error?.message} onPick={send} />
        </ApprovalContext.Provider>
        <Composer busy={busy} onSend={send} onStop={onStop} placeholder="Message the agent through useChat…" />
      </main>
      <aside className="side">
        <StatePanel state={state} updates={updates} how="data-state part" ended={busy ? undefined : ended} />
        <FrameInspector log={log} route={`POST /${ROUTE}`} />
      </aside>
    </div>
  );
}
