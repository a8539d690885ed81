// AI SDK conformance: runs streamkit's UI Message Stream bytes through the real `ai` client.
//
// request {
//   body: "<SSE text>" | [ "<SSE text>", ... ]   responses served, in order, to the client's requests
//   version: 7 | 6 | 5                            which `ai` major (7: `ai` + `@ai-sdk/react`'s Chat; 6/5: `ai6`/`ai5`)
//   client: "chat" (default) | "read"             "chat": the Chat state machine behind useChat, through
//                                                 DefaultChatTransport; "read": the transport's chunk parsing and
//                                                 schema, then readUIMessageStream
//   messages: UIMessage[]                         the chat's messages before the request
//   steps: [{do, args}]                           chat actions (default: one sendMessage({text:"hi"}));
//                                                 do: sendMessage | regenerate | addToolOutput | addToolApprovalResponse
//                                                 | answerApprovals ({approved: bool | bool[], reason?}: answers
//                                                 every approval-requested part of the last message, in order)
//                                                 | answerInterrupts ({status?, payload?, text?}: answers every
//                                                 data-interrupt part of the last message by its id, with
//                                                 sendMessage(text ? {text} : undefined, {body: {resume}}))
//   auto: "toolCalls" | "approvals" | "both"      sendAutomaticallyWhen, for the automatic continuation requests
//   clientTools: {toolName: output}               frontend tools: onToolCall answers their calls with addToolOutput
//   api: "http://..."                             talk to a live server instead of serving `body`
//   headers: {...}, body_options: {...}           transport headers / body
// }
// or { partial_json: ["<text>", ...] } -> [{value, defined, state}]: the client's parsePartialJson
// answer {
//   messages, message (last assistant message), status, error: {name, message} | null, finishReason,
//   data: [chunks seen by onData], requests: [{url, method, body}], chunks (read mode: validated chunks)
// }
import { Chat as ReactChat } from "@ai-sdk/react";
import * as ai7 from "ai";
import * as ai6 from "ai6";
import * as ai5 from "ai5";

const PACKAGES = { 5: ai5, 6: ai6, 7: ai7 };

class PlainState {
  constructor(messages) {
    this.messages = messages;
    this.status = "ready";
    this.error = undefined;
    this.pushMessage = (m) => {
      this.messages = this.messages.concat(m);
    };
    this.popMessage = () => {
      this.messages = this.messages.slice(0, -1);
    };
    this.replaceMessage = (i, m) => {
      this.messages = [...this.messages.slice(0, i), this.snapshot(m), ...this.messages.slice(i + 1)];
    };
    this.snapshot = (thing) => structuredClone(thing);
  }
}

function plain(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function errorInfo(err) {
  if (err == null) return null;
  return { name: err.name ?? "Error", message: String(err.message ?? err) };
}

function makeFetch(req, requests) {
  const bodies = Array.isArray(req.body) ? [...req.body] : req.body == null ? [] : [req.body];
  return async (url, init) => {
    requests.push({
      url: String(url),
      method: init?.method ?? "GET",
      headers: init?.headers ?? {},
      body: init?.body ? JSON.parse(init.body) : null,
    });
    if (req.api) return fetch(url, init);
    if (!bodies.length) return new Response("no scripted response left", { status: 500 });
    const next = bodies.shift();
    if (typeof next === "object" && next !== null) {
      return new Response(next.text ?? null, { status: next.status ?? 200, headers: next.headers ?? {} });
    }
    return new Response(next, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

async function runRead(pkg, req) {
  const requests = [];
  const transport = new pkg.DefaultChatTransport({ api: req.api ?? "/api/chat", fetch: makeFetch(req, requests) });
  const last = req.messages?.length ? req.messages[req.messages.length - 1] : undefined;
  const chunks = [];
  let error = null;
  let message = null;
  try {
    const stream = await transport.sendMessages({
      chatId: "chat-1",
      messages: req.messages ?? [],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const tee = stream.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          chunks.push(structuredClone(chunk));
          controller.enqueue(chunk);
        },
      }),
    );
    const onError = (e) => {
      if (!error) error = errorInfo(e);
    };
    for await (const m of pkg.readUIMessageStream({
      stream: tee,
      message: last?.role === "assistant" ? last : undefined,
      onError,
      terminateOnError: true,
    })) {
      message = m;
    }
  } catch (e) {
    if (!error) error = errorInfo(e);
  }
  return { message: plain(message), error, chunks: plain(chunks), requests };
}

// Wait until the chat is idle and no automatic request follows (sendAutomaticallyWhen starts one after the
// response that made it due has been processed).
async function settle(chat, requests) {
  let seen = -1;
  for (let i = 0; i < 400; i++) {
    const busy = chat.status === "submitted" || chat.status === "streaming";
    if (!busy && requests.length === seen) return;
    seen = busy ? -1 : requests.length;
    await new Promise((r) => setTimeout(r, busy ? 5 : 25));
  }
}

async function runChat(pkg, version, req) {
  const requests = [];
  const data = [];
  let finishReason = null;
  let finishes = [];
  const transport = new pkg.DefaultChatTransport({
    api: req.api ?? "/api/chat",
    fetch: makeFetch(req, requests),
    headers: req.headers,
    body: req.body_options,
  });
  const init = {
    id: req.chat_id ?? "chat-1",
    messages: req.messages ?? [],
    transport,
    generateId: (() => {
      let n = 0;
      return () => `gen-${++n}`;
    })(),
    onData: (part) => data.push(structuredClone(part)),
    onFinish: (info) => {
      finishReason = info?.finishReason ?? null;
      finishes.push({ finishReason: finishReason, isError: !!info?.isError, isAbort: !!info?.isAbort });
    },
    onError: () => {},
  };
  if (req.auto === "toolCalls") init.sendAutomaticallyWhen = pkg.lastAssistantMessageIsCompleteWithToolCalls;
  if (req.auto === "approvals") init.sendAutomaticallyWhen = pkg.lastAssistantMessageIsCompleteWithApprovalResponses;
  if (req.auto === "both")
    init.sendAutomaticallyWhen = (o) =>
      pkg.lastAssistantMessageIsCompleteWithApprovalResponses(o) || pkg.lastAssistantMessageIsCompleteWithToolCalls(o);
  const toolCalls = [];
  if (req.clientTools) {
    init.onToolCall = ({ toolCall }) => {
      toolCalls.push(plain(toolCall));
      if (!(toolCall.toolName in req.clientTools)) return;
      // not awaited: the chat's job queue runs it once the current response is processed
      void chat.addToolOutput({
        tool: toolCall.toolName,
        toolCallId: toolCall.toolCallId,
        output: req.clientTools[toolCall.toolName],
      });
    };
  }
  let chat;
  if (version === 7) {
    chat = new ReactChat(init);
  } else {
    const { messages, ...rest } = init;
    class PlainChat extends pkg.AbstractChat {
      constructor() {
        super({ ...rest, state: new PlainState(messages) });
      }
    }
    chat = new PlainChat();
  }
  const steps = req.steps ?? [{ do: "sendMessage", args: { text: "hi" } }];
  for (const step of steps) {
    if (step.do === "answerApprovals") {
      const last = chat.messages[chat.messages.length - 1];
      const asked = (last?.parts ?? []).filter((p) => p.state === "approval-requested");
      const answers = Array.isArray(step.args.approved) ? step.args.approved : asked.map(() => step.args.approved);
      for (const [i, part] of asked.entries()) {
        await chat.addToolApprovalResponse({ id: part.approval.id, approved: answers[i], reason: step.args.reason });
      }
      await settle(chat, requests);
      continue;
    }
    if (step.do === "answerInterrupts") {
      // what a page does with the data-interrupt parts it shows: answer each by id in the next request's body
      const last = chat.messages[chat.messages.length - 1];
      const asked = (last?.parts ?? []).filter((p) => p.type === "data-interrupt");
      const resume = asked.map((p) => ({
        interruptId: p.id,
        status: step.args?.status ?? "resolved",
        ...(step.args?.payload === undefined ? {} : { payload: step.args.payload }),
      }));
      const message = step.args?.text == null ? undefined : { text: step.args.text };
      await chat.sendMessage(message, { body: { resume } });
      await settle(chat, requests);
      continue;
    }
    const fn = chat[step.do];
    if (typeof fn !== "function") throw new Error(`unknown chat action ${step.do}`);
    const args = step.args === undefined ? [] : Array.isArray(step.args) ? step.args : [step.args];
    await fn.apply(chat, args);
    if (req.clientTools || req.auto === "both") await settle(chat, requests);
    // let automatic sends (sendAutomaticallyWhen) start and finish
    for (let i = 0; i < 20 && (chat.status === "submitted" || chat.status === "streaming"); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  for (let i = 0; i < 200 && (chat.status === "submitted" || chat.status === "streaming"); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const messages = plain(chat.messages);
  const assistants = messages.filter((m) => m.role === "assistant");
  return {
    messages,
    message: assistants.length ? assistants[assistants.length - 1] : null,
    status: chat.status,
    error: errorInfo(chat.error),
    finishReason,
    finishes,
    data: plain(data),
    requests,
    toolCalls,
  };
}

export async function handle(req) {
  if (req.partial_json) {
    // the client's best-effort parse of streaming tool input
    const out = [];
    for (const text of req.partial_json) {
      const { value, state } = await ai7.parsePartialJson(text);
      out.push({ value: value === undefined ? null : value, defined: value !== undefined, state });
    }
    return out;
  }
  const version = req.version ?? 7;
  const pkg = PACKAGES[version];
  if (!pkg) throw new Error(`no ai package for version ${version}`);
  if ((req.client ?? "chat") === "read") return runRead(pkg, req);
  return runChat(pkg, version, req);
}
