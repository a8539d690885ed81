// CopilotKit's v2 runtime, with one agent: the streamkit AG-UI route, reached over HTTP by @ag-ui/client's
// HttpAgent. STREAMKIT_URL is read when the server starts (default: the demo on port 8000).
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, createCopilotRuntimeHandler, InMemoryAgentRunner } from "@copilotkit/runtime/v2";

const streamkit = process.env.STREAMKIT_URL ?? "http://127.0.0.1:8000";

const runtime = new CopilotRuntime({
  agents: { default: new HttpAgent({ url: `${streamkit}/api/agui` }) },
  runner: new InMemoryAgentRunner(),
});

const handler = createCopilotRuntimeHandler({ runtime, basePath: "/api/copilotkit" });

export const GET = handler;
export const POST = handler;
