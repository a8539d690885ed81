"""A small SVG line chart of the scaling sweep (``bench.concurrency.run_sweep``), written with no plotting library.

Two panels side by side, open streams on a logarithmic x axis: the server's RSS per open stream, and the p99
inter-frame gap as a multiple of the pacing; one line for streamkit's AI SDK route, one for the plain
``StreamingResponse``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any
from xml.sax.saxutils import escape

__all__ = ["scaling_svg"]

_W, _H = 360, 240  # one panel
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 30, 30, 40
_SERIES = {"streamkit": "#d9480f", "plain": "#1c7ed6"}


def _nice_top(value: float) -> float:
    """A round number at or above ``value`` for the top of a y axis."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    step = 10.0 ** math.floor(math.log10(value))
    for k in (1.0, 2.0, 2.5, 5.0, 10.0):
        if k * step >= value:
            return k * step
    return 10.0 * step


def _panel(x0: int, title: str, unit: str, xs: Sequence[int], series: dict[str, list[float]]) -> list[str]:
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    top = _nice_top(max((v for vs in series.values() for v in vs if math.isfinite(v)), default=1.0) * 1.1)
    lo, hi = math.log10(min(xs)), math.log10(max(xs))
    span = hi - lo or 1.0

    def px(x: float) -> float:
        return x0 + _LEFT + (math.log10(x) - lo) / span * plot_w

    def py(y: float) -> float:
        return _TOP + plot_h - y / top * plot_h

    out = [f'<text x="{x0 + _W / 2}" y="18" text-anchor="middle" font-weight="bold">{escape(title)}</text>']
    for i in range(5):  # horizontal grid and y labels
        y = top * i / 4
        out.append(f'<line x1="{x0 + _LEFT}" y1="{py(y):.1f}" x2="{x0 + _W - _RIGHT}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 + _LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    for x in xs:  # x ticks
        out.append(f'<text x="{px(x):.1f}" y="{_TOP + plot_h + 16}" text-anchor="middle">{x:,}</text>')
    out.append(f'<text x="{x0 + _LEFT + plot_w / 2}" y="{_H - 6}" text-anchor="middle">open streams</text>')
    out.append(
        f'<text x="{x0 + 12}" y="{_TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 {x0 + 12} {_TOP + plot_h / 2})">{escape(unit)}</text>'
    )
    for name, values in series.items():
        points = [(px(x), py(v)) for x, v in zip(xs, values, strict=True) if math.isfinite(v)]
        color = _SERIES.get(name, "#333")
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>' for x, y in points]
    return out


def scaling_svg(points: Sequence[Any]) -> str:
    """The SVG document of the sweep's ``points`` (:class:`~bench.concurrency.SweepPoint`)."""
    xs = [p.streams for p in points]

    def series(of: Callable[[Any], dict[str, float]]) -> dict[str, list[float]]:
        return {name: [of(p)[name] for p in points] for name in _SERIES}

    width = 2 * _W
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{_H + 24}" '
        f'viewBox="0 0 {width} {_H + 24}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{_H + 24}" fill="white"/>',
        *_panel(0, "Server RSS per open stream", "KiB", xs, series(lambda p: p.kib_per_stream)),
        *_panel(_W, "p99 inter-frame gap", "x the pacing", xs, series(lambda p: p.p99_gap)),
    ]
    legend_x = width / 2 - 170
    for i, (name, color) in enumerate(_SERIES.items()):
        x = legend_x + i * 190
        label = "streamkit AI SDK route" if name == "streamkit" else "plain StreamingResponse"
        parts.append(f'<line x1="{x}" y1="{_H + 12}" x2="{x + 18}" y2="{_H + 12}" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{x + 22}" y="{_H + 16}">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
