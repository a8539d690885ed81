"""The validator's value objects: a :class:`Finding` (rule, frame index, what happened) and the :class:`Report`
of one body (its findings, its frames, and the fold: what the client ends up showing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rules import RULES, Severity

__all__ = ["Finding", "Report"]


@dataclass(frozen=True)
class Finding:
    """One broken rule at one frame (``frame`` is the 0-based index among the body's frames, None for the body)."""

    rule: str
    frame: int | None
    message: str
    text: str | None = None

    @property
    def severity(self) -> Severity:
        """``error`` or ``warning``, from the rule table."""
        return RULES[self.rule].severity

    @property
    def explanation(self) -> str:
        """What the client does with such a frame (the rule's one line)."""
        return RULES[self.rule].explanation

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "frame": self.frame,
            "message": self.message,
            "explanation": self.explanation,
            "text": self.text,
        }


@dataclass
class Report:
    """What :func:`~streamkit.testing.validate` found in one body, and what the client ends up showing.

    ``frames`` are the parsed frames (chunk dicts, AG-UI events, or the dialect's ``{"event", "data"}``);
    ``fold`` is the protocol's own fold result (a ``UIMessageFolder``, ``agui.Folded`` or ``dsh.Folded``);
    ``messages``, ``tool_calls``, ``state`` and ``text`` are read from it the same way for every protocol;
    ``outcome`` is how the run ended as the client saw it, ``pending_tool_calls`` the calls left to answer.
    ``status`` and ``headers`` are the response's, when the body came from a route
    (:func:`~streamkit.testing.call_route`).
    """

    protocol: str
    version: str
    findings: list[Finding] = field(default_factory=list)
    frames: list[Any] = field(default_factory=list)
    fold: Any = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    state: Any = None
    text: str = ""
    outcome: str | None = None
    pending_tool_calls: list[str] = field(default_factory=list)
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def errors(self) -> list[Finding]:
        """The findings the client rejects or loses."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """The findings the client tolerates."""
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not self.errors

    def rules(self) -> set[str]:
        """The ids of every rule broken."""
        return {f.rule for f in self.findings}

    def raise_for_errors(self) -> None:
        """Raise ``AssertionError`` listing the errors (and a non-2xx status), if any (for tests)."""
        if self.status is not None and not 200 <= self.status < 300:
            raise AssertionError(f"HTTP {self.status}\n{self.format()}")
        if not self.ok:
            raise AssertionError(self.format())

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``streamkit check --json``)."""
        return {
            "protocol": self.protocol,
            "version": self.version,
            "ok": self.ok,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_dict() for f in self.findings],
            "frames": len(self.frames),
            "outcome": self.outcome,
            "text": self.text,
            "tool_calls": self.tool_calls,
            "pending_tool_calls": self.pending_tool_calls,
            "state": self.state,
        }

    def format(self) -> str:
        """A readable report: one block per finding (rule, frame, the frame, what the client does)."""
        lines = [f"{self.protocol} {self.version}: {len(self.frames)} frames, "
                 f"{len(self.errors)} errors, {len(self.warnings)} warnings"]  # fmt: skip
        for f in self.findings:
            where = "body" if f.frame is None else f"frame {f.frame}"
            lines.append(f"  {f.severity.upper():7} {f.rule} at {where}: {f.message}")
            if f.text is not None:
                shown = f.text if len(f.text) <= 160 else f.text[:157] + "..."
                lines.append(f"          {shown}")
            lines.append(f"          -> {f.explanation}")
        if self.text:
            shown = self.text if len(self.text) <= 160 else self.text[:157] + "..."
            lines.append(f"  text shown: {shown!r}")
        if self.tool_calls:
            lines.append(f"  tool calls: {len(self.tool_calls)}")
        if self.outcome is not None:
            lines.append(f"  outcome: {self.outcome}")
        return "\n".join(lines)
