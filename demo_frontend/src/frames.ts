// The protocol inspector's data: a fetch wrapper that copies every SSE frame of a response into a
// FrameLog, and the FrameLog itself (a small external store React reads with useSyncExternalStore).

export type FrameKind = "request" | "frame" | "comment" | "status" | "end" | "failure";

export interface Frame {
  seq: number;
  /** Milliseconds since the request was sent. */
  at: number;
  kind: FrameKind;
  /** The event/chunk type (`text-delta`, `TEXT_MESSAGE_CONTENT`, ...), or a label for other kinds. */
  label: string;
  /** The raw text: the frame's data, the request line, the status. */
  text: string;
}

const MAX_FRAMES = 4000;

export class FrameLog {
  private frames: Frame[] = [];
  private snapshot: readonly Frame[] = [];
  private listeners = new Set<() => void>();
  private seq = 0;
  private scheduled = false;
  private total = 0;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): readonly Frame[] => this.snapshot;

  /** How many frames arrived in all (older ones are dropped past MAX_FRAMES). */
  get count(): number {
    return this.total;
  }

  add(kind: FrameKind, label: string, text: string, at: number): void {
    this.frames.push({ seq: ++this.seq, at: Math.round(at), kind, label, text });
    if (kind === "frame") this.total += 1;
    if (this.frames.length > MAX_FRAMES) this.frames.splice(0, this.frames.length - MAX_FRAMES);
    this.schedule();
  }

  clear(): void {
    this.frames = [];
    this.total = 0;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // One React update per animation frame, however many SSE frames arrived in it.
    const flush = () => {
      this.scheduled = false;
      this.snapshot = this.frames.slice();
      for (const listener of this.listeners) listener();
    };
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(flush);
    else setTimeout(flush, 16);
  }
}

/** The frame's type for the label, and its JSON without the type for the text (the raw data otherwise). A
 * text, reasoning or tool-argument delta shows its text first, then the ids: that is what one reads. */
function describe(data: string): [string, string] {
  try {
    const value = JSON.parse(data);
    if (value && typeof value === "object" && !Array.isArray(value) && typeof value.type === "string") {
      const { type, ...rest } = value as { type: string } & Record<string, unknown>;
      const key = typeof rest.delta === "string" ? "delta" : typeof rest.inputTextDelta === "string" ? "inputTextDelta" : null;
      if (key !== null) {
        const { [key]: delta, ...ids } = rest;
        return [type, `${JSON.stringify(delta)}  ${JSON.stringify(ids)}`];
      }
      return [type, JSON.stringify(rest)];
    }
  } catch {
    /* not JSON: [DONE] and the like */
  }
  return data.length > 24 ? [data.slice(0, 24) + "…", data] : [data, ""];
}

function parseFrame(raw: string, log: FrameLog, at: number): void {
  const data: string[] = [];
  let comment: string | null = null;
  let event: string | null = null; // a named SSE event: its name is the label
  for (const line of raw.split("\n")) {
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    else if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith(":")) comment = line.slice(1).trim();
  }
  if (data.length) {
    const [label, text] = event ? [event, data.join("\n")] : describe(data.join("\n"));
    log.add("frame", label, text, at);
  } else if (comment !== null) {
    log.add("comment", "comment", `: ${comment}`, at);
  }
}

/** A `fetch` that behaves like the real one and copies the request and every SSE frame into `log`. */
export function tappedFetch(log: FrameLog): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const body = typeof init?.body === "string" ? init.body : "";
    log.add("request", `${method} ${url}`, body, 0);
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      log.add("failure", "network error", String(error), elapsed());
      throw error;
    }
    const type = response.headers.get("content-type") ?? "";
    log.add("status", `HTTP ${response.status}`, type, elapsed());
    if (!response.body) return response;
    const [forClient, forLog] = response.body.tee();
    void (async () => {
      const reader = forLog.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value.replace(/\r\n?/g, "\n");
          let cut: number;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            parseFrame(buffer.slice(0, cut), log, elapsed());
            buffer = buffer.slice(cut + 2);
          }
        }
        if (buffer.trim()) {
          if (response.ok && type.includes("event-stream")) parseFrame(buffer, log, elapsed());
          else log.add("frame", "body", buffer, elapsed());
        }
        log.add("end", "end of body", "", elapsed());
      } catch (error) {
        log.add("failure", "stream closed", String(error), elapsed());
      }
    })();
    return new Response(forClient, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
