// AG-UI conformance handler: runs streamkit's SSE bytes through the real @ag-ui/client pipeline.
//
// mode "run" (default): one or more runs of one HttpAgent whose `fetch` is stubbed to answer with our bytes, so
//   the client's own transport (SSE parser), compatibility boundary, schema enforcement, chunk expansion,
//   verifier and reducers all see exactly what a server would send.
//   req: {runs: [{body | chunks | chunksBase64, status?, contentType?, parameters?, addMessages?}], threadId?, messages?, state?,
//        url?, headers?, client?}  -- with `url`, the runs go over real HTTP to a live server instead of the stub;
//        client "0.0" runs them through @ag-ui/client 0.0.59 instead of 1.0.
//   A run may also answer what the previous run left: `resumePending: {status, payload?} | [{status, payload?}, ...]`
//   resumes the client's pending interrupts (in order); `answerPending: {toolName: content}` appends a tool message
//   for each of the previous run's pending calls of that tool (a frontend tool the app ran).
//   result: {runs: [{request, events, outcome, result, newMessages, runError, failed, messages, state}],
//            messages, state, pendingInterrupts}
// mode "patch": applies patches with fast-json-patch exactly as the client reducer does
//   (`applyPatch(state, delta, true, false)`), a snapshot step replacing the state.
//   req: {initial, steps: [{delta} | {snapshot}]}   result: {states: [...], errors: [...]}
// mode "parse": validates event dicts with the client's own zod schemas (no pipeline).
//   req: {events: [...]}   result: {errors: [null | message, ...]}
import { HttpAgent } from "@ag-ui/client";
import { HttpAgent as HttpAgent0 } from "agui0"; // @ag-ui/client 0.0.59, the release CopilotKit pins
import { EventSchema } from "@ag-ui/core/schemas";
import jsonpatch from "fast-json-patch";

const encoder = new TextEncoder();

function responseFor(run) {
  const headers = { "content-type": run.contentType ?? "text/event-stream" };
  const chunks = run.chunksBase64
    ? run.chunksBase64.map((c) => Uint8Array.from(Buffer.from(c, "base64")))
    : (run.chunks ?? [run.body ?? ""]).map((c) => encoder.encode(c));
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Response(stream, { status: run.status ?? 200, headers });
}

async function runMode(req) {
  let current = null;
  const requests = [];
  const Agent = req.client === "0.0" ? HttpAgent0 : HttpAgent;
  const agent = new Agent({
    url: req.url ?? "http://streamkit.test/api/agui",
    threadId: req.threadId ?? "thread-1",
    initialMessages: req.messages ?? [],
    initialState: req.state ?? {},
    headers: req.headers ?? {},
    fetch: async (url, init) => {
      requests.push({ url, method: init.method, headers: init.headers, body: JSON.parse(init.body) });
      return req.url ? fetch(url, init) : responseFor(current);
    },
  });
  const results = [];
  for (const run of req.runs) {
    current = run;
    if (run.addMessages) agent.addMessages(run.addMessages);
    const previous = results[results.length - 1];
    if (run.answerPending && previous?.pendingToolCallIds) {
      const calls = agent.messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
      for (const id of previous.pendingToolCallIds) {
        const call = calls.find((c) => c.id === id);
        if (call && call.function.name in run.answerPending) {
          agent.addMessage({ id: `tool-${id}`, role: "tool", toolCallId: id, content: run.answerPending[call.function.name] });
        }
      }
    }
    const parameters = { ...(run.parameters ?? {}) };
    if (run.resumePending) {
      const answers = Array.isArray(run.resumePending) ? run.resumePending : agent.pendingInterrupts.map(() => run.resumePending);
      const pending = agent.pendingInterrupts.slice(0, answers.length);
      parameters.resume = pending.map((interrupt, i) => ({ interruptId: interrupt.id, ...answers[i] }));
    }
    const seen = { events: [], outcome: null, runError: null, failed: null, pendingToolCallIds: null, interrupts: null };
    const subscriber = {
      onEvent: ({ event }) => {
        seen.events.push(event);
      },
      onRunFinishedEvent: (params) => {
        seen.outcome = params.outcome;
        if (params.outcome === "success") seen.pendingToolCallIds = params.pendingToolCallIds;
        if (params.outcome === "interrupt") seen.interrupts = params.interrupts;
      },
      onRunErrorEvent: ({ event }) => {
        seen.runError = { message: event.message, code: event.code };
      },
      onRunFailed: ({ error }) => {
        seen.failed = String(error && error.message ? error.message : error);
      },
    };
    let outcome = null;
    try {
      outcome = await agent.runAgent({ runId: run.runId ?? `run-${results.length + 1}`, ...parameters }, subscriber);
    } catch (error) {
      seen.failed = seen.failed ?? String(error && error.message ? error.message : error);
    }
    results.push({
      request: requests[requests.length - 1] ?? null,
      ...seen,
      result: outcome ? outcome.result ?? null : null,
      newMessages: outcome ? outcome.newMessages : null,
      messages: structuredClone(agent.messages),
      state: structuredClone(agent.state) ?? null,
    });
  }
  return {
    runs: results,
    messages: agent.messages,
    state: agent.state ?? null,
    pendingInterrupts: agent.pendingInterrupts,
  };
}

function patchMode(req) {
  let state = req.initial;
  const states = [];
  const errors = [];
  for (const step of req.steps) {
    if ("snapshot" in step) {
      state = step.snapshot;
      errors.push(null);
    } else {
      try {
        state = jsonpatch.applyPatch(state, step.delta, true, false).newDocument;
        errors.push(null);
      } catch (error) {
        errors.push(String(error && error.message ? error.message : error).split("\n")[0]);
      }
    }
    states.push(state === undefined ? { undefined: true } : state);
  }
  return { states, errors };
}

function parseMode(req) {
  return {
    errors: req.events.map((event) => {
      const parsed = EventSchema.safeParse(event);
      return parsed.success ? null : parsed.error.message;
    }),
  };
}

export async function handle(req) {
  const mode = req.mode ?? "run";
  if (mode === "run") return runMode(req);
  if (mode === "patch") return patchMode(req);
  if (mode === "parse") return parseMode(req);
  throw new Error(`unknown mode ${mode}`);
}
