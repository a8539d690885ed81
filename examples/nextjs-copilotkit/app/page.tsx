"use client";
// CopilotChat talks to the runtime route (app/api/copilotkit), whose "default" agent is the streamkit server.
// The side panel shows the agent's shared state (the demo's plan) through useAgent, and every backend tool
// call is drawn by one wildcard renderer.
import { CopilotChat, CopilotKit, useAgent, useRenderTool, UseAgentUpdate } from "@copilotkit/react-core/v2";

type Step = { id: string; title: string; status: string };
type Plan = { task?: string; status?: string; steps?: Step[] };

function ToolCards() {
  useRenderTool(
    {
      name: "*",
      render: ({ name, status, parameters, result }: { name: string; status: string; parameters?: unknown; result?: string }) => (
        <div className="tool-card" data-testid="tool" data-name={name} data-status={status}>
          <strong>{name}</strong> <span>{status}</span>
          {parameters !== undefined && <pre>{JSON.stringify(parameters)}</pre>}
          {status === "complete" && <pre data-testid="tool-result">{result}</pre>}
        </div>
      ),
    },
    [],
  );
  return null;
}

function PlanPanel() {
  const { agent } = useAgent({ updates: [UseAgentUpdate.OnStateChanged] });
  const plan = (agent.state ?? {}) as Plan;
  return (
    <aside className="plan" data-testid="plan" data-status={plan.status ?? ""}>
      <h2>Plan</h2>
      {plan.task ? <p>{plan.task}</p> : <p>No plan yet.</p>}
      <ol>
        {(plan.steps ?? []).map((step) => (
          <li key={step.id} data-status={step.status}>
            {step.title} ({step.status})
          </li>
        ))}
      </ol>
    </aside>
  );
}

export default function Page() {
  return (
    <CopilotKit runtimeUrl="/api/copilotkit" enableInspector={false}>
      <ToolCards />
      <div className="layout">
        <div className="chat">
          <CopilotChat />
        </div>
        <PlanPanel />
      </div>
    </CopilotKit>
  );
}
