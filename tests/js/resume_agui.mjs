// Reattaching to an AG-UI run with the real client (`@ag-ui/client`'s HttpAgent).
//
// request {
//   url: "http://A/api/agui"             the run endpoint (worker A)
//   reattach: "http://B/api/agui/reattach"  the reattach endpoint (worker B), or null: no reattach
//   thread_id, run_id, messages, state  the run's input
//   headers: {...}                       request headers (authorization)
//   drop_after: n | null                 drop the run after n TEXT_MESSAGE_CONTENT events arrived: the client aborts
//                                        its request (abortRun(), as when the page goes away)
//   mode: "same-tab" | "reload"          reattach with the first agent's partial messages and state, or with
//                                        the input messages and state only (a fresh page)
// }
// answer { messages, state, first: {messages, state, error}, error, dropped, events: [types seen on reattach] }
//
// or, without servers: request { bodies: ["<SSE>", ...], thread_id, messages, state } runs one HttpAgent over
// each body in turn (its fetch answers with the body); answer { runs: [{error, events}], messages, state }
import { HttpAgent } from "@ag-ui/client";

function plain(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function dropping(req, state) {
  return async (url, init) => {
    const controller = new AbortController();
    init?.signal?.addEventListener("abort", () => controller.abort());
    const res = await fetch(url, { ...init, signal: controller.signal });
    if (req.drop_after == null || !res.body) return res;
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
        ctrl.enqueue(value);
        if (!state.dropped && (seen.match(/"type":"TEXT_MESSAGE_CONTENT"/g) ?? []).length >= req.drop_after) {
          state.dropped = true;
          state.drop();
        }
      },
      cancel() {
        controller.abort();
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
}

async function replay(req) {
  const bodies = [...req.bodies];
  const agent = new HttpAgent({
    url: "http://streamkit.test/api/agui",
    threadId: req.thread_id ?? "thread-1",
    initialMessages: req.messages ?? [],
    initialState: req.state ?? {},
    fetch: async () =>
      new Response(bodies.shift(), { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
  const runs = [];
  for (let i = 0; i < req.bodies.length; i++) {
    const events = [];
    let error = null;
    try {
      await agent.runAgent({}, { onEvent: ({ event }) => void events.push(event.type) });
    } catch (err) {
      error = String(err?.message ?? err);
    }
    runs.push({ error, events });
  }
  return { runs, messages: plain(agent.messages), state: plain(agent.state) };
}

export async function handle(req) {
  if (req.bodies) return replay(req);
  const state = { dropped: false, drop: () => {} };
  const first = new HttpAgent({
    url: req.url,
    threadId: req.thread_id,
    initialMessages: req.messages ?? [],
    initialState: req.state ?? {},
    headers: req.headers ?? {},
    fetch: dropping(req, state),
  });
  state.drop = () => first.abortRun();
  let firstError = null;
  try {
    await first.runAgent({ runId: req.run_id });
  } catch (err) {
    firstError = String(err?.message ?? err);
  }
  const out = {
    first: { messages: plain(first.messages), state: plain(first.state), error: firstError },
    dropped: state.dropped,
  };
  if (!req.reattach) return { ...out, messages: out.first.messages, state: out.first.state, error: firstError };

  const reload = req.mode === "reload";
  const again = new HttpAgent({
    url: req.reattach,
    threadId: req.thread_id,
    initialMessages: reload ? (req.messages ?? []) : first.messages,
    initialState: reload ? (req.state ?? {}) : first.state,
    headers: req.headers ?? {},
  });
  const events = [];
  let error = null;
  let result = null;
  try {
    result = await again.runAgent({}, { onEvent: ({ event }) => void events.push(event.type) });
  } catch (err) {
    error = String(err?.message ?? err);
  }
  return {
    ...out,
    messages: plain(again.messages),
    state: plain(again.state),
    newMessages: plain(result?.newMessages ?? null),
    error,
    events,
  };
}
