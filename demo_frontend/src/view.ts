// One rendering model for both tabs: each protocol's client state is converted to these types, so the
// same components show the AI SDK's UIMessages and AG-UI's messages.

export type ToolState =
  | "input-streaming"
  | "input-available"
  | "approval-requested"
  | "approval-responded"
  | "output-available"
  | "output-error"
  | "output-denied";

/** How a run ended, when it did not end normally: the plan then shows it instead of "working". */
export type RunEnd = "stopped" | "failed" | undefined;

export interface SourceView {
  id: string;
  url?: string;
  title?: string;
}

export type PartView =
  | { kind: "text"; key: string; text: string; streaming: boolean }
  | { kind: "reasoning"; key: string; text: string; streaming: boolean }
  | {
      kind: "tool";
      key: string;
      id: string;
      name: string;
      state: ToolState;
      input: unknown;
      output?: unknown;
      errorText?: string;
      /** The approval asked for the call: its reason, and the answer once given. */
      approval?: { id: string; reason?: string; approved?: boolean };
    }
  | { kind: "sources"; key: string; sources: SourceView[] };

export interface MessageView {
  id: string;
  role: "user" | "assistant";
  parts: PartView[];
}

/** Parse JSON text when it is JSON (tool arguments and AG-UI tool results travel as text). */
export function maybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
