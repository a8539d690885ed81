// streamkit check --clients: one body through the real client package, as `streamkit.testing.clients` asks.
// stdin: {"protocol": "aisdk" | "agui", "version": 5 | 6 | 7 | "0.0" | "1.0", "body": "<SSE text>",
//         "messages": [...], "state": {...}}
// stdout: {"error": "<what the client reported>" | null, "warnings": [...], "message": ..., "messages": ...,
//          "state": ..., "outcome": ...}
let warnings = [];
for (const level of ["log", "info", "warn", "error", "debug"]) {
  console[level] = (...args) => warnings.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(" "));
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const stream = () =>
  new Response(req.body, { status: 200, headers: { "content-type": "text/event-stream" } });

async function aisdk() {
  const pkg = await import({ 5: "ai5", 6: "ai6", 7: "ai" }[req.version] ?? "ai");
  let messages = req.messages ?? [];
  const state = {
    get messages() {
      return messages;
    },
    set messages(value) {
      messages = value;
    },
    status: "ready",
    error: undefined,
    pushMessage: (m) => (messages = messages.concat(m)),
    popMessage: () => (messages = messages.slice(0, -1)),
    replaceMessage: (i, m) => (messages = [...messages.slice(0, i), structuredClone(m), ...messages.slice(i + 1)]),
    snapshot: (thing) => structuredClone(thing),
  };
  const transport = new pkg.DefaultChatTransport({ api: "http://streamkit.check/api/chat", fetch: async () => stream() });
  let finishReason = null;
  class Chat extends pkg.AbstractChat {
    constructor() {
      super({ id: "check", transport, state, onFinish: (info) => (finishReason = info?.finishReason ?? null), onError: () => {} });
    }
  }
  const chat = new Chat();
  await chat.sendMessage({ text: "hi" });
  for (let i = 0; i < 200 && (chat.status === "submitted" || chat.status === "streaming"); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const assistants = messages.filter((m) => m.role === "assistant");
  return {
    error: chat.error ? String(chat.error.message ?? chat.error) : null,
    message: assistants.length ? assistants[assistants.length - 1] : null,
    outcome: finishReason,
  };
}

async function agui() {
  const { HttpAgent } = await import(req.version === "0.0" ? "agui0" : "@ag-ui/client");
  const agent = new HttpAgent({
    url: "http://streamkit.check/api/agui",
    initialMessages: req.messages ?? [],
    initialState: req.state ?? {},
    fetch: async () => stream(),
  });
  let error = null;
  let outcome = null;
  try {
    const result = await agent.runAgent({ runId: "check" }, {
      onRunFinishedEvent: (params) => (outcome = params.outcome ?? "success"),
      onRunErrorEvent: ({ event }) => (outcome = "error:" + event.message),
      onRunFailed: ({ error: e }) => (error = String(e?.message ?? e)),
    });
    void result;
  } catch (e) {
    error = error ?? String(e?.message ?? e);
  }
  return { error, messages: agent.messages, state: agent.state ?? null, outcome };
}

const answer = req.protocol === "agui" ? await agui() : await aisdk();
await new Promise((r) => setTimeout(r, 0));
process.stdout.write(JSON.stringify({ ...answer, warnings }));
