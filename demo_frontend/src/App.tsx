// The page: a header with the two protocol tabs over the same agent. Both tabs stay mounted, so switching
// keeps each conversation, its state and its frames.
import { useEffect, useState } from "react";
import { AgUiChat } from "./AgUiChat";
import { AiSdkChat } from "./AiSdkChat";
import { DshChat } from "./DshChat";

type Tab = "aisdk" | "agui" | "dsh";

interface Info {
  agent: string;
  model?: string;
  baseUrl?: string;
}

const TABS: { id: Tab; title: string; detail: string }[] = [
  { id: "aisdk", title: "AI SDK", detail: "useChat · DefaultChatTransport" },
  { id: "agui", title: "AG-UI", detail: "HttpAgent" },
  { id: "dsh", title: "Console", detail: "named SSE events · plain fetch" },
];

function initialTab(): Tab {
  const hash = window.location.hash.slice(1);
  return hash === "agui" || hash === "dsh" ? hash : "aisdk";
}

function AgentBadge({ info }: { info: Info | null }) {
  if (!info) return <span className="agent-badge muted">connecting…</span>;
  if (info.agent === "offline")
    return (
      <span className="agent-badge" title="No model, no key, no network: a scripted agent with realistic pacing">
        <span className="dot offline" /> Offline scripted agent
      </span>
    );
  return (
    <span className="agent-badge" title={info.baseUrl}>
      <span className="dot live" /> {info.model ?? info.agent}
    </span>
  );
}

export function App() {
  const [tab, setTab] = useState<Tab>(initialTab);
  const [info, setInfo] = useState<Info | null>(null);
  useEffect(() => {
    fetch("api/info")
      .then((r) => (r.ok ? r.json() : null))
      .then(setInfo)
      .catch(() => setInfo(null));
  }, []);
  const choose = (id: Tab) => {
    setTab(id);
    history.replaceState(null, "", `#${id}`);
  };
  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="logo" aria-hidden>
            <svg viewBox="0 0 32 32" width="26" height="26">
              <rect width="32" height="32" rx="8" fill="currentColor" />
              <path d="M8 20c4 0 4-8 8-8s4 8 8 8" stroke="white" strokeWidth="3" fill="none" strokeLinecap="round" />
            </svg>
          </span>
          <span className="brand-name">streamkit</span>
          <span className="brand-sub">one agent, three protocols</span>
        </div>
        <nav className="tabs" role="tablist">
          {TABS.map((t) => (
            <button
              key={t.id}
              role="tab"
              aria-selected={tab === t.id}
              className={tab === t.id ? "tab active" : "tab"}
              onClick={() => choose(t.id)}
              data-testid={`tab-${t.id}`}
            >
              <span className="tab-title">{t.title}</span>
              <span className="tab-detail">{t.detail}</span>
            </button>
          ))}
        </nav>
        <AgentBadge info={info} />
      </header>
      <div className="panes">
        <section className="pane" hidden={tab !== "aisdk"} data-testid="pane-aisdk">
          <AiSdkChat />
        </section>
        <section className="pane" hidden={tab !== "agui"} data-testid="pane-agui">
          <AgUiChat />
        </section>
        <section className="pane" hidden={tab !== "dsh"} data-testid="pane-dsh">
          <DshChat />
        </section>
      </div>
    </div>
  );
}
