// Resumable streams with the real `ai` client: the Chat state machine behind useChat, DefaultChatTransport.
//
// request {
//   post: "http://A/api/chat"       where the chat POSTs (worker A)
//   resume_base: "http://B"         where resume GETs go (worker B): the origin of `post` is replaced by it
//   chat_id, text                   the chat and the user's message
//   headers: {...}                  transport headers (authorization)
//   drop_after: n | null            cut the POST response (a network error) once n text-delta chunks arrived
//   mode: "same-tab" | "reload" | "none"
//       same-tab: after the drop, the same Chat calls resumeStream()
//       reload:   a new Chat (same id, only the user message kept, as after a page reload) calls resumeStream()
//       none:     no resume (an uninterrupted run when drop_after is null)
//   resume_only: true               skip the POST: a new Chat with `messages` just calls resumeStream()
//   messages: UIMessage[]           initial messages for resume_only
// }
// answer { messages, status, error, requests: [{method, url, status}], dropped, startMessageId }
//
// or request { body: "<SSE>" }: the body through the transport's parsing and readUIMessageStream;
// answer { message, error }
import { Chat } from "@ai-sdk/react";
import { DefaultChatTransport, readUIMessageStream } from "ai";

async function parse(req) {
  const transport = new DefaultChatTransport({
    api: "http://streamkit.test/api/chat",
    fetch: async () => new Response(req.body, { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
  let error = null;
  let message = null;
  try {
    const stream = await transport.sendMessages({ chatId: "c", messages: [], trigger: "submit-message" });
    for await (const m of readUIMessageStream({
      stream,
      onError: (e) => {
        error ??= errorInfo(e);
      },
      terminateOnError: true,
    })) {
      message = m;
    }
  } catch (e) {
    error ??= errorInfo(e);
  }
  return { message: plain(message), error };
}

function plain(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function errorInfo(err) {
  return err == null ? null : { name: err.name ?? "Error", message: String(err.message ?? err) };
}

function ids() {
  let n = 0;
  return () => `gen-${++n}`;
}

async function settle(chat) {
  for (let i = 0; i < 400 && (chat.status === "submitted" || chat.status === "streaming"); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function handle(req) {
  if (typeof req.body === "string") return parse(req);
  const requests = [];
  const state = { dropped: false, startMessageId: null };
  const origin = new URL(req.post).origin;

  const fetchVia = async (url, init) => {
    const method = init?.method ?? "GET";
    const target = method === "GET" ? String(url).replace(origin, req.resume_base) : String(url);
    const controller = new AbortController();
    const res = await fetch(target, { ...init, signal: controller.signal });
    requests.push({ method, url: target, status: res.status });
    if (method !== "POST" || req.drop_after == null || !res.body) return res;
    // Pass the body through until enough text deltas arrived, then fail like a dropped connection.
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const body = new ReadableStream({
      async pull(ctrl) {
        const { done, value } = await reader.read();
        if (done) {
          ctrl.close();
          return;
        }
        seen += decoder.decode(value, { stream: true });
        const start = /"type":"start"[^}]*"messageId":"([^"]+)"/.exec(seen);
        if (start) state.startMessageId = start[1];
        ctrl.enqueue(value);
        if ((seen.match(/"type":"text-delta"/g) ?? []).length >= req.drop_after) {
          state.dropped = true;
          controller.abort();
          ctrl.error(new TypeError("network error"));
        }
      },
      cancel() {
        controller.abort();
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };

  const transport = () =>
    new DefaultChatTransport({ api: req.post, headers: req.headers ?? {}, fetch: fetchVia });

  let chat;
  if (req.resume_only) {
    chat = new Chat({ id: req.chat_id, messages: req.messages ?? [], transport: transport(), generateId: ids() });
    await chat.resumeStream();
    await settle(chat);
  } else {
    chat = new Chat({ id: req.chat_id, transport: transport(), generateId: ids() });
    await chat.sendMessage({ text: req.text ?? "hi" });
    await settle(chat);
    if (req.mode === "same-tab") {
      await chat.resumeStream();
      await settle(chat);
    } else if (req.mode === "reload") {
      const kept = plain(chat.messages).filter((m) => m.role === "user");
      chat = new Chat({ id: req.chat_id, messages: kept, transport: transport(), generateId: ids() });
      await chat.resumeStream();
      await settle(chat);
    }
  }
  return {
    messages: plain(chat.messages),
    status: chat.status,
    error: errorInfo(chat.error),
    requests,
    dropped: state.dropped,
    startMessageId: state.startMessageId,
  };
}
