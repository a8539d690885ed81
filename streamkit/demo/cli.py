"""The ``streamkit`` command: ``streamkit demo`` serves the demo app with uvicorn; ``streamkit check`` checks
an endpoint or a captured body as the real clients read it (:mod:`streamkit.testing.check`).

Without a model configured the demo runs the offline scripted agent (no key, no network). Name a model
with ``--model`` or ``STREAMKIT_MODEL`` to talk to an OpenAI-compatible server instead, or a provider with
``--provider`` (``STREAMKIT_PROVIDER``) to use its source (:mod:`streamkit.sources`)::

    streamkit demo --port 8000
    streamkit demo --base-url http://localhost:11434/v1 --model llama3.2
    STREAMKIT_MODEL=gpt-4o-mini OPENAI_API_KEY=... streamkit demo
    OPENAI_API_KEY=... streamkit demo --provider openai-responses --model gpt-5-mini
    ANTHROPIC_API_KEY=... streamkit demo --provider anthropic
    streamkit demo --provider ollama --model qwen3

Or put a remote agent server behind both tabs (``--agui-url`` for an AG-UI endpoint, ``--aisdk-url`` for an
AI SDK chat endpoint, ``--remote-header`` for its credentials)::

    streamkit demo --agui-url http://localhost:8123/agent
    streamkit demo --aisdk-url http://localhost:3000/api/chat --remote-header "Authorization: Bearer ..."

``--otel`` records every run with OpenTelemetry (:mod:`streamkit.telemetry`; needs ``opentelemetry-sdk``): the
spans are printed to the console, or sent where the standard ``OTEL_EXPORTER_OTLP_*`` variables say (with the
metrics) when an OTLP endpoint is set and the OTLP exporter package is installed::

    streamkit demo --otel
    OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_SERVICE_NAME=chat streamkit demo --otel
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..events import Agent
from ..sources.agui import RemoteAGUIAgent
from ..sources.aisdk import RemoteAISDKAgent
from ..testing import check as checks
from .agent import Pacing, ScriptedAgent
from .models import PROVIDERS, ModelAgent, ModelConfig, provider_agent

__all__ = ["build_parser", "main", "make_agent", "setup_otel"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``streamkit`` command."""
    parser = argparse.ArgumentParser(prog="streamkit", description="streamkit tools.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="serve the demo page and both protocol routes",
        description="Serve the demo: the page at /, the AI SDK route at /api/chat, AG-UI at /api/agui. "
        "Offline scripted agent unless a model is named (flags, or STREAMKIT_* / OPENAI_* variables).",
    )
    demo.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s)")
    demo.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    model = demo.add_argument_group(
        "a real model",
        "openai: any OpenAI-compatible Chat Completions server over httpx (OPENAI_BASE_URL, OPENAI_API_KEY); "
        "openai-responses: the Responses API through the openai SDK (OPENAI_API_KEY); anthropic: the anthropic "
        "SDK (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL); ollama: Ollama's /api/chat (OLLAMA_HOST, "
        "OLLAMA_MODEL). SDK providers need their extra: pip install 'streamkit[openai]' / '[anthropic]'.",
    )
    model.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="which provider source drives the demo (default: openai when a model is named) [STREAMKIT_PROVIDER]",
    )
    model.add_argument(
        "--base-url",
        help="API root, e.g. http://localhost:11434/v1 (openai) or http://host:11434 (ollama) [STREAMKIT_BASE_URL]",
    )
    model.add_argument(
        "--model", help="model name; without it (and without --provider) the demo runs offline [STREAMKIT_MODEL]"
    )
    model.add_argument("--api-key", help="API key, if the server needs one [STREAMKIT_API_KEY]")
    model.add_argument("--max-steps", type=int, default=8, help="model calls per run (default: %(default)s)")
    remote = demo.add_argument_group(
        "a remote agent server",
        "put another server behind both tabs: the page's AI SDK and AG-UI routes forward each run to it "
        "(streamkit.sources.agui / streamkit.sources.aisdk)",
    )
    remote.add_argument("--agui-url", metavar="URL", help="an AG-UI endpoint (LangGraph, Mastra, another streamkit...)")
    remote.add_argument("--aisdk-url", metavar="URL", help="an AI SDK chat endpoint (a Next.js route, ...)")
    remote.add_argument(
        "--remote-header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a header sent to the remote server (e.g. 'Authorization: Bearer ...'); repeatable",
    )
    demo.add_argument("--offline", action="store_true", help="use the offline agent even if a model is set")
    demo.add_argument(
        "--pacing",
        type=float,
        default=1.0,
        help="offline agent speed: 1 is realistic, 0.2 is fast, 0 is instant (default: %(default)s)",
    )
    demo.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow a page on ORIGIN (e.g. http://localhost:3000) to call the routes; repeatable",
    )
    demo.add_argument(
        "--otel",
        action="store_true",
        help="record every run with OpenTelemetry: spans to the console, or to the OTLP endpoint that "
        "OTEL_EXPORTER_OTLP_ENDPOINT names (needs opentelemetry-sdk, and an OTLP exporter package for OTLP)",
    )
    demo.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    _add_check(commands)
    return parser


_SDK_MISSING = (
    "--otel needs the OpenTelemetry SDK: pip install 'streamkit[otel]' opentelemetry-sdk "
    "(and opentelemetry-exporter-otlp to send to a collector)"
)


def setup_otel(env: Mapping[str, str]) -> str:
    """Install global OpenTelemetry providers for the demo; where the spans go.

    With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) set, spans and metrics
    are sent over OTLP as the standard ``OTEL_EXPORTER_OTLP_*`` variables say (``..._PROTOCOL`` ``grpc`` or
    ``http/protobuf``, the default); otherwise spans are printed to the console. The service is
    ``streamkit-demo`` unless ``OTEL_SERVICE_NAME`` says otherwise. Exits with what to install when a package
    is missing.
    """
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor
    except ImportError:
        raise SystemExit(_SDK_MISSING) from None
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "streamkit-demo"})
    tracer_provider = TracerProvider(resource=resource)
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint:
        tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
        trace.set_tracer_provider(tracer_provider)
        return "spans to the console"
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    protocol = protocol or "http/protobuf"
    kind = "grpc" if protocol == "grpc" else "http"
    try:
        spans = importlib.import_module(f"opentelemetry.exporter.otlp.proto.{kind}.trace_exporter")
        points = importlib.import_module(f"opentelemetry.exporter.otlp.proto.{kind}.metric_exporter")
    except ImportError:
        needed = f"opentelemetry-exporter-otlp-proto-{kind}"
        raise SystemExit(f"OTEL_EXPORTER_OTLP_ENDPOINT is set: sending over OTLP needs pip install {needed}") from None
    tracer_provider.add_span_processor(BatchSpanProcessor(spans.OTLPSpanExporter()))
    trace.set_tracer_provider(tracer_provider)
    reader = PeriodicExportingMetricReader(points.OTLPMetricExporter())
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    return f"spans and metrics over OTLP ({protocol}) to {endpoint}"


def _add_check(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="check an endpoint's stream (or a captured body) as the real clients read it",
        description="POST a request to an AI SDK, AG-UI or dialect endpoint and check status, headers, body "
        "and timing; or check a captured body with --file. Exit 0: no errors, 1: errors, 2: unreachable.",
    )
    checks.add_arguments(check)


def make_agent(args: argparse.Namespace) -> Agent:
    """The agent the flags and the environment ask for."""
    agui_url, aisdk_url = getattr(args, "agui_url", None), getattr(args, "aisdk_url", None)
    if agui_url and aisdk_url:
        raise SystemExit("--agui-url and --aisdk-url: name one remote server")
    if agui_url or aisdk_url:
        headers: dict[str, str] = {}
        for header in getattr(args, "remote_header", None) or ():
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise SystemExit(f"--remote-header {header!r}: expected 'NAME: VALUE'")
            headers[name.strip()] = value.strip()
        if agui_url:
            return RemoteAGUIAgent(agui_url, headers=headers)
        return RemoteAISDKAgent(str(aisdk_url), headers=headers)
    if args.offline:
        return ScriptedAgent(Pacing().scaled(args.pacing))
    provider = getattr(args, "provider", None) or os.environ.get("STREAMKIT_PROVIDER") or None
    if provider is not None and provider not in PROVIDERS:
        raise SystemExit(f"unknown provider {provider!r}: choose one of {', '.join(PROVIDERS)}")
    if provider in (None, "openai"):
        config = ModelConfig.from_env(os.environ, base_url=args.base_url, model=args.model, api_key=args.api_key)
        if config is None and provider is None:
            return ScriptedAgent(Pacing().scaled(args.pacing))
    env = os.environ
    return provider_agent(
        provider or "openai",
        model=args.model or env.get("STREAMKIT_MODEL"),
        base_url=args.base_url or env.get("STREAMKIT_BASE_URL"),
        api_key=args.api_key or env.get("STREAMKIT_API_KEY"),
        max_steps=args.max_steps,
    )


def _port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (in use, say), or None when it can. Probes as uvicorn binds
    (``SO_REUSEADDR``), so only a socket that really holds the port counts."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"unknown host: {exc}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return "address already in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
    return None


def _demo(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        print("the demo needs uvicorn: pip install 'streamkit[demo]'", file=sys.stderr)
        return 1
    from .app import create_app

    if args.max_steps < 1:
        print("--max-steps must be at least 1", file=sys.stderr)
        return 2
    if args.pacing < 0:
        print("--pacing must be >= 0", file=sys.stderr)
        return 2
    busy = _port_in_use(args.host, args.port)
    if busy is not None:
        print(
            f"streamkit demo: cannot listen on {args.host}:{args.port} ({busy}); "
            f"pick another port with --port, e.g. `streamkit demo --port {args.port + 10}` "
            f"or `make demo PORT={args.port + 10}`",
            file=sys.stderr,
        )
        return 1
    agent = make_agent(args)
    telemetry = setup_otel(os.environ) if getattr(args, "otel", False) else None
    app = create_app(agent, cors_origins=args.cors_origin)
    if isinstance(agent, ModelAgent):
        who = f"{agent.provider} model {agent.model} at {agent.base_url}"
    elif isinstance(agent, RemoteAGUIAgent | RemoteAISDKAgent):
        kind = "AG-UI" if isinstance(agent, RemoteAGUIAgent) else "AI SDK"
        who = f"the {kind} server at {agent.url}"
    else:
        who = "the offline scripted agent (no API key needed)"
    host = f"[{args.host}]" if ":" in args.host else args.host
    # streamkit's own lines (a repaired stream, a stalled reader...) as an app would show them
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("streamkit").setLevel(args.log_level.upper())
    print(f"streamkit demo: http://{host}:{args.port}  ({who})", flush=True)
    if telemetry is not None:
        print(f"streamkit demo: OpenTelemetry on, {telemetry}", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``streamkit`` command; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    if args.command == "check":
        return checks.run(args)
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
