"""``streamkit check``: an endpoint (or a captured body) checked as the real client reads it.

:func:`check_url` sends a protocol's request to an endpoint and checks the response: the status, the headers
a streaming response needs (``text/event-stream``, the AI SDK's ``x-vercel-ai-ui-message-stream: v1``,
``Cache-Control: no-cache``, ``X-Accel-Buffering: no``, no compression), the body (:func:`~streamkit.testing.
validate`), and the timing: when frames that a slow run produces over time all arrive in one burst at the end,
something between the handler and the client buffers them. :func:`check_file` checks a body offline. Both
return a :class:`CheckResult`; :func:`main` is the command line (``streamkit check --help``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

from .report import Finding, Report
from .validate import PROTOCOLS, validate

__all__ = [
    "CheckResult",
    "Timing",
    "add_arguments",
    "check_clients",
    "check_file",
    "check_url",
    "detect_protocol",
    "main",
    "request_body",
]

BUFFERED_CAUSES = (
    "compression middleware (GZipMiddleware, a CDN) holding the stream to compress it; "
    "a reverse proxy buffering it (nginx: proxy_buffering off or X-Accel-Buffering: no); "
    "a dev server rewrite or proxy (a Next.js rewrite to another server buffers in some versions; "
    "call the backend directly to compare); or a handler that builds the whole body before answering"
)
"""The usual reasons a stream arrives in one burst, named by the ``timing.buffered`` finding."""


@dataclass
class Timing:
    """When the response arrived: seconds from the request to the headers, the first and the last frame."""

    headers: float = 0.0
    first_frame: float | None = None
    last_frame: float | None = None
    frames: int = 0
    reads: int = 0

    @property
    def buffered(self) -> bool:
        """Whether every frame came in one burst at the end of a response that took a while (0.25 s or more),
        and the burst says buffering rather than a short answer after a long wait: the headers were held back
        with the frames (what compression and buffering proxies do), or the burst is too long for a model to
        have written it at once (20 frames or more)."""
        if self.frames < 3 or self.first_frame is None or self.last_frame is None:
            return False
        spread = self.last_frame - self.first_frame
        burst = self.last_frame >= 0.25 and spread <= max(0.02, 0.05 * self.last_frame)
        held = self.first_frame - self.headers <= 0.02
        return burst and (held or self.frames >= 20)

    def to_dict(self) -> dict[str, Any]:
        """The timing as JSON-ready data."""
        return {"headers": self.headers, "first_frame": self.first_frame, "last_frame": self.last_frame,
                "frames": self.frames, "reads": self.reads, "buffered": self.buffered}  # fmt: skip


@dataclass
class CheckResult:
    """What ``streamkit check`` found: the HTTP findings, the body's :class:`Report`, the timing."""

    source: str
    protocol: str
    report: Report
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    http_findings: list[Finding] = field(default_factory=list)
    timing: Timing | None = None
    client: str | None = None
    body: str = ""

    @property
    def findings(self) -> list[Finding]:
        """Every finding: the response's first, then the body's."""
        return self.http_findings + self.report.findings

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(f.severity == "error" for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0 without errors, 1 with errors."""
        return 0 if self.ok else 1

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (``--json``)."""
        return {
            "source": self.source,
            "protocol": self.protocol,
            "ok": self.ok,
            "status": self.status,
            "headers": self.headers,
            "http": [f.to_dict() for f in self.http_findings],
            "timing": None if self.timing is None else self.timing.to_dict(),
            "client": self.client,
            "report": self.report.to_dict(),
        }

    def format(self) -> str:
        """A readable report."""
        lines = [f"streamkit check {self.source} ({self.protocol})"]
        if self.status is not None:
            kind = self.headers.get("content-type", "no content type")
            lines.append(f"  HTTP {self.status}, {kind}")
        if self.timing is not None:
            t = self.timing
            first = f"headers after {t.headers:.3f}s, " + (
                "no frame" if t.first_frame is None else f"first frame after {t.first_frame:.3f}s"
            )
            last = "" if t.last_frame is None else f", last after {t.last_frame:.3f}s"
            lines.append(f"  {first}{last}, {t.frames} frames in {t.reads} reads")
        for f in self.http_findings:
            lines.append(f"  {f.severity.upper():7} {f.rule}: {f.message}")
            lines.append(f"          -> {f.explanation}")
        lines.append(self.report.format())
        if self.client is not None:
            lines.append(f"  real client: {self.client}")
        errors = sum(f.severity == "error" for f in self.findings)
        lines.append("OK: no errors" if self.ok else f"FAILED: {errors} errors")
        return "\n".join(lines)


def request_body(protocol: str, message: str) -> dict[str, Any]:
    """A minimal request of ``protocol`` carrying one user ``message``."""
    if protocol == "agui":
        return {
            "threadId": f"check-{uuid.uuid4().hex[:8]}",
            "runId": f"run-{uuid.uuid4().hex[:8]}",
            "messages": [{"id": "check-user", "role": "user", "content": message}],
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }
    if protocol == "dsh":
        return {"agentId": f"check-{uuid.uuid4().hex[:8]}", "message": message}
    return {
        "id": f"check-{uuid.uuid4().hex[:8]}",
        "messages": [{"id": "check-user", "role": "user", "parts": [{"type": "text", "text": message}]}],
        "trigger": "submit-message",
    }


def guess_protocol(url: str) -> str:
    """The protocol an endpoint's path suggests (``agui``, ``/agent/stream``: the dialect; else the AI SDK)."""
    path = urlparse(url).path.lower()
    if "agui" in path or "ag-ui" in path or "copilotkit" in path:
        return "agui"
    if path.endswith("/stream") and "agent" in path:
        return "dsh"
    return "aisdk"


def detect_protocol(headers: Mapping[str, str], body: str) -> str | None:
    """The protocol a response speaks, from its headers and its first frames (None if none fits)."""
    if headers.get("x-vercel-ai-ui-message-stream"):
        return "aisdk"
    for block in body.split("\n\n")[:5]:
        lines = block.strip("\r\n").split("\n")
        if any(line.startswith("event:") for line in lines):
            return "dsh"
        data = "\n".join(line[5:].lstrip(" ") for line in lines if line.startswith("data:"))
        if not data:
            continue
        if data == "[DONE]":
            return "aisdk"
        try:
            value = json.loads(data)
        except ValueError:
            continue
        kind = value.get("type") if isinstance(value, dict) else None
        if isinstance(kind, str):
            return "agui" if kind.isupper() else "aisdk"
    return None


def _version(protocol: str, sdk_version: int | None, agui_version: str | None) -> int | str | None:
    return sdk_version if protocol == "aisdk" else agui_version if protocol == "agui" else None


def _header_findings(protocol: str, status: int, headers: Mapping[str, str]) -> list[Finding]:
    found: list[Finding] = []
    if not 200 <= status < 300:
        found.append(Finding("http.status", None, f"HTTP {status}"))
    kind = headers.get("content-type", "")
    if not kind.lower().startswith("text/event-stream"):
        found.append(Finding("http.content-type", None, f"content-type is {kind or 'absent'}"))
    if protocol == "aisdk" and headers.get("x-vercel-ai-ui-message-stream") != "v1":
        found.append(Finding("http.ui-message-stream", None, "x-vercel-ai-ui-message-stream is not v1"))
    cache = headers.get("cache-control", "")
    if "no-cache" not in cache.lower():
        found.append(Finding("http.cache-control", None, f"cache-control is {cache or 'absent'}"))
    if headers.get("x-accel-buffering", "").lower() != "no":
        found.append(Finding("http.proxy-buffering", None, "x-accel-buffering: no is absent"))
    encoding = headers.get("content-encoding", "").lower()
    if encoding and encoding != "identity":
        found.append(Finding("http.compressed", None, f"content-encoding is {encoding}"))
    return found


def check_url(
    url: str,
    *,
    protocol: str | None = None,
    message: str = "Hello! Which tools can you use?",
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    sdk_version: int | None = None,
    agui_version: str | None = None,
    timeout: float = 60.0,
    transport: httpx.BaseTransport | None = None,
) -> CheckResult:
    """POST a request of ``protocol`` to ``url`` and check the response (see the module).

    ``body`` replaces the request body (a JSON value); ``protocol`` left out is guessed from the path for the
    request and read from the response for the check. Raises :class:`httpx.HTTPError` when the endpoint
    cannot be reached.
    """
    asked = protocol or guess_protocol(url)
    payload = request_body(asked, message) if body is None else body
    sent = {"accept": "text/event-stream", "content-type": "application/json", **(headers or {})}
    timing = Timing()
    chunks: list[bytes] = []
    start = time.perf_counter()
    with (
        httpx.Client(timeout=timeout, transport=transport) as client,
        client.stream("POST", url, json=payload, headers=sent) as response,
    ):
        timing.headers = time.perf_counter() - start
        pending = b""
        for chunk in response.iter_bytes():
            now = time.perf_counter() - start
            timing.reads += 1
            chunks.append(chunk)
            buf = (pending + chunk).replace(b"\r\n", b"\n")
            ends = buf.count(b"\n\n")
            pending = buf.rsplit(b"\n\n", 1)[-1]
            if ends:
                timing.frames += ends
                timing.first_frame = now if timing.first_frame is None else timing.first_frame
                timing.last_frame = now
        status = response.status_code
        received = {k.lower(): v for k, v in response.headers.items()}
    text = b"".join(chunks).decode("utf-8", errors="replace")
    found = protocol or detect_protocol(received, text) or asked
    findings = _header_findings(found, status, received)
    if timing.buffered:
        spread = (timing.last_frame or 0) - (timing.first_frame or 0)
        findings.append(
            Finding(
                "timing.buffered",
                None,
                f"all {timing.frames} frames arrived within {spread * 1000:.0f} ms, {timing.last_frame:.2f}s "
                f"after the request; usual causes: {BUFFERED_CAUSES}",
            )
        )
    listed = payload.get("messages") if isinstance(payload, dict) else None
    history = [m for m in listed if isinstance(m, dict)] if isinstance(listed, list) else None
    state = payload.get("state") if isinstance(payload, dict) and found == "agui" else None
    report = validate(text, found, _version(found, sdk_version, agui_version), messages=history, state=state)
    if not report.frames and 200 <= status < 300:
        findings.append(Finding("http.no-frame", None, f"{len(text)} bytes, no frame"))
    return CheckResult(url, found, report, status, received, findings, timing, body=text)


def check_file(path: str | Path, protocol: str, *, version: int | str | None = None) -> CheckResult:
    """Check a captured body offline (``OSError`` when the file cannot be read)."""
    body = Path(path).read_bytes()
    return CheckResult(str(path), protocol, validate(body, protocol, version), body=body.decode("utf-8", "replace"))


def check_clients(result: CheckResult, body: str) -> None:
    """Run ``body`` through the real client package too and add its verdict to ``result`` (``--clients``).

    Raises :class:`~streamkit.testing.clients.ClientsUnavailable` without node, npm or the packages.
    """
    from .clients import client_rejects, run_client
    from .validate import agui_version

    report = result.report
    version: int | str = int(report.version) if report.protocol == "aisdk" else agui_version(report.version)
    answer = run_client(body, report.protocol, version)
    why = client_rejects(answer, body, report.protocol)
    name = f"ai {version} Chat" if report.protocol == "aisdk" else f"@ag-ui/client {version}"
    if why is None:
        result.client = f"{name} accepted the body" + (
            " (the validator's errors are frames or fields it drops without a word)" if not report.ok else ""
        )
    else:
        result.client = f"{name} rejected the body: {why.splitlines()[0][:200]}"
        if report.ok:
            result.http_findings.append(Finding("clients.rejected", None, why.splitlines()[0][:300]))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``streamkit check`` on ``parser``."""
    parser.add_argument("url", nargs="?", help="the endpoint to POST to (e.g. http://localhost:8000/api/chat)")
    parser.add_argument("--file", metavar="BODY", help="check a captured SSE body instead (needs --protocol)")
    parser.add_argument("--protocol", choices=PROTOCOLS, help="aisdk, agui or dsh (default: read from the response)")
    parser.add_argument("--message", default="Hello! Which tools can you use?", help="the user message sent")
    parser.add_argument("--body", metavar="FILE", help="send this JSON file as the request body instead")
    parser.add_argument(
        "--header", action="append", default=[], metavar="'NAME: VALUE'", help="a request header; repeatable"
    )
    parser.add_argument("--sdk-version", type=int, choices=(5, 6, 7), help="the ai major the client runs (default 7)")
    parser.add_argument("--agui-version", help="the @ag-ui/client version the client runs (0.0.x or 1.0; default 1.0)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait (default: %(default)s)")
    parser.add_argument(
        "--clients",
        action="store_true",
        help="also run the body through the real JS client packages (needs node; installed once into a cache)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """Run ``streamkit check`` with parsed ``args``; the exit status (0 fine, 1 errors, 2 unreachable/unreadable)."""
    if args.file:
        if not args.protocol:
            print("streamkit check --file needs --protocol aisdk|agui|dsh", file=sys.stderr)
            return 2
        try:
            result = check_file(args.file, args.protocol, version=_version(args.protocol, args.sdk_version,
                                                                         args.agui_version))  # fmt: skip
        except OSError as exc:
            print(f"streamkit check: cannot read {args.file}: {exc}", file=sys.stderr)
            return 2
    elif args.url:
        headers: dict[str, str] = {}
        for header in args.header:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                print(f"--header {header!r}: expected 'NAME: VALUE'", file=sys.stderr)
                return 2
            headers[name.strip()] = value.strip()
        body = None
        if args.body:
            try:
                body = json.loads(Path(args.body).read_text())
            except (OSError, ValueError) as exc:
                print(f"streamkit check: cannot read --body {args.body}: {exc}", file=sys.stderr)
                return 2
        try:
            result = check_url(
                args.url, protocol=args.protocol, message=args.message, body=body, headers=headers,
                sdk_version=args.sdk_version, agui_version=args.agui_version, timeout=args.timeout,
            )  # fmt: skip
        except httpx.HTTPError as exc:
            print(f"streamkit check: cannot reach {args.url}: {exc}", file=sys.stderr)
            return 2
    else:
        print("streamkit check: name a URL, or --file BODY --protocol P", file=sys.stderr)
        return 2
    if getattr(args, "clients", False):
        from .clients import ClientsUnavailable

        try:
            check_clients(result, result.body)
        except ClientsUnavailable as exc:
            print(f"streamkit check --clients: {exc}", file=sys.stderr)
    print(json.dumps(result.to_dict(), indent=2, default=str) if args.json else result.format())
    return result.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """``streamkit check`` as a program of its own (``python -m streamkit.testing.check``)."""
    parser = argparse.ArgumentParser(prog="streamkit check", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
