// A plain console client for the named-event dialect (meta / chunk / reasoning / step_break / done / error):
// fetch, a small SSE reader and a fold, no framework client. The console view is a list of turns; an assistant
// turn is bubbles split at every step_break, with tool cards in between; a bubble's answer grows with `chunk`,
// its thinking (shown apart, as the other tabs show reasoning) with `reasoning`; `done.messages` rebuilds the
// whole view.

export interface DshFrame {
  event: string;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Named SSE frames from a response body (blocks split on blank lines; `: ping` comments skipped). */
export async function* readEvents(body: ReadableStream<Uint8Array<ArrayBuffer>>): AsyncGenerator<DshFrame> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const parse = (block: string): DshFrame | null => {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    }
    return data.length ? { event, data: JSON.parse(data.join("\n")) } : null;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = parse(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (frame) yield frame;
    }
  }
  const last = buffer.trim() ? parse(buffer) : null;
  if (last) yield last;
}

export type CardStatus = "started" | "done" | "error";

export interface Card {
  callId: string;
  toolName: string;
  args: unknown;
  status: CardStatus;
  result?: unknown;
  error?: string;
  denied?: boolean;
}

export type Item =
  | { kind: "bubble"; key: string; text: string; reasoning: string }
  | { kind: "tool"; key: string; card: Card };

export interface Turn {
  id: string;
  role: "user" | "assistant";
  items: Item[];
}

interface Message {
  id: string;
  role: string;
  content?: unknown;
  reasoning?: string;
  toolCalls?: { callId: string; toolName: string; args: unknown }[];
  callId?: string;
  status?: CardStatus;
  error?: string;
  denied?: boolean;
}

/** Every turn of the conversation from `done.messages`: each assistant message a bubble and its tool cards,
 * each card in the final state its `tool` message gives it. */
export function rebuild(messages: Message[]): Turn[] {
  const results = new Map<string, Message>();
  for (const m of messages) if (m.role === "tool" && m.callId) results.set(m.callId, m);
  const turns: Turn[] = [];
  let current: Turn | null = null;
  for (const m of messages) {
    if (m.role === "user" || m.role === "system") {
      turns.push({ id: m.id, role: "user", items: [{ kind: "bubble", key: m.id, text: String(m.content ?? ""), reasoning: "" }] });
      current = null;
      continue;
    }
    if (m.role !== "assistant") continue;
    if (!current) {
      current = { id: `turn-${m.id}`, role: "assistant", items: [] };
      turns.push(current);
    }
    const text = typeof m.content === "string" ? m.content : "";
    if (text || m.reasoning) current.items.push({ kind: "bubble", key: m.id, text, reasoning: m.reasoning ?? "" });
    for (const call of m.toolCalls ?? []) {
      const result = results.get(call.callId);
      const card: Card = { callId: call.callId, toolName: call.toolName, args: call.args, status: "started" };
      if (result?.status === "error") Object.assign(card, { status: "error", error: result.error ?? String(result.content) });
      else if (result) Object.assign(card, { status: "done", result: result.content });
      if (result?.denied) card.denied = true;
      current.items.push({ kind: "tool", key: call.callId, card });
    }
  }
  return turns;
}

/** The console's state for one conversation: live turns while a run streams, the rebuild once it is done. */
export class DshConsole {
  turns: Turn[] = [];
  meta: Record<string, unknown> | null = null;
  done: Record<string, any> | null = null; // eslint-disable-line @typescript-eslint/no-explicit-any
  error: string | undefined;
  stepBreaks = 0;
  rebuilt = false;
  private bubble: Extract<Item, { kind: "bubble" }> | null = null;
  private cards = new Map<string, Card>();
  private seq = 0;

  ask(text: string): void {
    this.turns.push({ id: `u-${++this.seq}`, role: "user", items: [{ kind: "bubble", key: `u-${this.seq}`, text, reasoning: "" }] });
    this.turns.push({ id: `a-${this.seq}`, role: "assistant", items: [] });
    this.bubble = null;
    this.cards.clear();
    this.error = undefined;
    this.done = null;
    this.rebuilt = false;
  }

  private get turn(): Turn {
    return this.turns[this.turns.length - 1];
  }

  apply(frame: DshFrame): void {
    const data = frame.data;
    switch (frame.event) {
      case "meta":
        this.meta = data;
        break;
      case "chunk": // the answer's text
      case "reasoning": // the model's thinking, kept apart from the answer
        if (!this.bubble) {
          this.bubble = { kind: "bubble", key: `b-${++this.seq}`, text: "", reasoning: "" };
          this.turn.items.push(this.bubble);
        }
        if (frame.event === "reasoning") this.bubble.reasoning += data.content;
        else this.bubble.text += data.content;
        break;
      case "step_break": {
        // close the current bubble; the first break of a call inserts its card, later ones update it
        this.stepBreaks += 1;
        this.bubble = null;
        let card = this.cards.get(data.callId);
        if (!card) {
          card = { callId: data.callId, toolName: data.toolName, args: data.args, status: data.status };
          this.cards.set(data.callId, card);
          this.turn.items.push({ kind: "tool", key: data.callId, card });
        }
        Object.assign(card, { toolName: data.toolName, args: data.args, status: data.status });
        if (data.status !== "started") {
          delete card.result;
          delete card.error;
          delete card.denied;
        }
        if ("result" in data) card.result = data.result;
        if ("error" in data) card.error = data.error;
        if (data.denied) card.denied = true;
        break;
      }
      case "done":
        this.done = data;
        this.turns = rebuild(data.messages ?? []);
        this.rebuilt = true;
        break;
      case "error":
        this.error = data.message;
        break;
    }
  }
}

/** POST the message and feed every frame to `onFrame`; a non-2xx answer throws with the server's message. */
export async function streamAgent(
  route: string,
  body: { agentId: string; message: string },
  onFrame: (frame: DshFrame) => void,
  fetchImpl: typeof fetch = fetch,
): Promise<void> {
  const response = await fetchImpl(`${route}/stream`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  if (!response.ok || !response.body) {
    let message = `HTTP ${response.status}`;
    try {
      message = (await response.json()).error.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new Error(message);
  }
  for await (const frame of readEvents(response.body)) {
    onFrame(frame);
    if (frame.event === "done" || frame.event === "error") break;
  }
}
