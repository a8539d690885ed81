// A long-lived conformance oracle: reads one JSON request per line on stdin, runs it through the real
// client packages, writes one JSON answer per line on stdout.
//   request: {"id": 1, "kind": "aisdk", "req": {...}}   -> handled by ./aisdk.mjs's `handle(req)`
//   answer:  {"id": 1, "ok": true, "result": ..., "warnings": [...]}  or  {"id": 1, "ok": false, "error": "..."}
// Console output made while a request runs is captured as that request's warnings, never printed, so
// stdout carries answers only.
import readline from "node:readline";

const handlers = new Map();
let captured = [];
for (const level of ["log", "info", "warn", "error", "debug"]) {
  console[level] = (...args) => {
    captured.push(args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : safe(a))).join(" "));
  };
}

function safe(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

async function handlerFor(kind) {
  if (!/^[a-z0-9_-]+$/.test(kind)) throw new Error(`bad kind ${kind}`);
  if (!handlers.has(kind)) handlers.set(kind, (await import(`./${kind}.mjs`)).handle);
  return handlers.get(kind);
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
let busy = false;

rl.on("line", (line) => {
  queue.push(line);
  if (!busy) drain();
});

async function drain() {
  busy = true;
  while (queue.length) {
    const line = queue.shift();
    let id = null;
    let answer;
    captured = [];
    try {
      const msg = JSON.parse(line);
      id = msg.id;
      const handle = await handlerFor(msg.kind);
      const result = await handle(msg.req);
      // Let late asynchronous warnings (reducers, subscribers) land before answering.
      await new Promise((r) => setTimeout(r, 0));
      answer = { id, ok: true, result, warnings: captured };
    } catch (err) {
      answer = { id, ok: false, error: String(err && err.stack ? err.stack : err), warnings: captured };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
  busy = false;
}
