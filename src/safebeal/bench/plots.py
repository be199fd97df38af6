"""The report's bar charts as SVG text, written directly (no plotting library): grouped bars (the leaderboard's
rates, process vs termination violations) and stacked bars (violations by hazard category). Every bar links
into the sample browser (``<a xlink:href>``) and names its value in a tooltip.

Drawing these with matplotlib cost a benchmark run about a second (importing it, then two renders per figure)
against a few milliseconds here; the PNG files are still drawn with matplotlib on request
(:func:`safebeal.bench.report.write_pngs`).
"""

from __future__ import annotations

import math
from html import escape
from typing import List, Optional, Sequence, Tuple

#: matplotlib's default colour cycle ("tab10"), so the charts look as they did
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf")
CHAR_W = 6.0  #: average width of a character at the tick-label size (px), for the layout
FONT = "font-family:sans-serif"
MAX_LABEL = 30  #: a longer x label is cut (an ellipsis in its middle), its full text its tooltip; model names fit


ELLIPSIS = "\u2026"


def short_label(label: str, most: int = MAX_LABEL) -> str:
    """``label`` cut to ``most`` characters where it is longer: its start and its end, an ellipsis between."""
    if len(label) <= most:
        return label
    head = (most - 1) // 2
    return label[:head] + ELLIPSIS + label[len(label) - (most - 1 - head):]


def short_labels(labels: Sequence[str], most: int = MAX_LABEL) -> List[str]:
    """Every label at most ``most`` characters and still told apart: each cut by :func:`short_label`; where two
    would read the same, what all labels share at their start and end is left out (an ellipsis in its place), and
    where they still collide each is numbered in order (``3:``)."""
    out = [short_label(l, most) for l in labels]
    if len(set(out)) == len(out):
        return out
    pre = len(_common_prefix(labels))
    suf = len(_common_prefix([l[pre:][::-1] for l in labels]))
    out = [short_label(_core(l, pre, suf, most), most) for l in labels]
    if len(set(out)) == len(out):
        return out
    return [short_label(f"{i + 1}:{l}", most) for i, l in enumerate(labels)]


def _core(label: str, pre: int, suf: int, most: int) -> str:
    """``label`` without most of its shared start (``pre`` characters) and end (``suf``): what differs, with as
    much of the shared text around it as fits in ``most`` characters."""
    start, end = pre, len(label) - suf
    room = most - (end - start) - 2
    if room > 0:
        left = min(room // 2 + room % 2, start)
        right = min(room - left, len(label) - end)
        left = min(room - right, start)
        start, end = start - left, end + right
    return (ELLIPSIS if start else "") + label[start:end] + (ELLIPSIS if end < len(label) else "")


def _common_prefix(labels: Sequence[str]) -> str:
    import os

    return os.path.commonprefix(list(labels)) if len(labels) > 1 else ""


def nice_ticks(top: float, n: int = 5) -> List[float]:
    """Tick values from 0 to at least ``top`` in steps of 1, 2, 2.5 or 5 times a power of ten (about ``n`` steps)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    k = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(k + 1)]


def _num(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def bar_chart(labels: Sequence[str], series: Sequence[Tuple[str, Sequence[float], Sequence[str]]], *,
              title: str, ylabel: str, stacked: bool = False, ymax: Optional[float] = None,
              width: Optional[float] = None, height: float = 324.0) -> str:
    """An SVG bar chart: one group (or stack) per label; ``series`` is ``(name, values, links)`` per legend entry,
    ``links[i]`` the fragment bar ``i`` opens. ``ymax`` fixes the y range (e.g. 100 for percentages)."""
    n = max(len(labels), 1)
    width = width or max(432.0, 57.6 * n + 144)
    per_row = 4
    rows = math.ceil(len(series) / per_row)
    left, right, top = 52.0, 12.0, 34.0 + 14 * rows  # title, then the legend's rows, then the plot
    shown = short_labels(labels)
    bottom = 16 + CHAR_W * max([len(l) for l in shown] or [1]) * 0.72  # labels at 45 degrees
    plot_w, plot_h = width - left - right, height - top - bottom
    if stacked:
        peak = max([sum(vals[i] for _, vals, _ in series) for i in range(len(labels))] or [0])
    else:
        peak = max([v for _, vals, _ in series for v in vals] or [0])
    ticks = nice_ticks(peak) if ymax is None else nice_ticks(ymax)
    y_top = ymax if ymax is not None else ticks[-1]

    def y(v: float) -> float:
        return top + plot_h * (1 - v / y_top)

    slot = plot_w / n
    group = slot * 0.8
    bar_w = group if stacked else group / max(len(series), 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" style="{FONT};font-size:11px">',
           f'<text x="{left + plot_w / 2:.1f}" y="18" text-anchor="middle" style="font-size:13px">{escape(title)}</text>',
           f'<text transform="translate(14 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>']
    for t in ticks:
        if t > y_top + 1e-9:
            continue
        out.append(f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#e6e6e6"/>'
                   f'<text x="{left - 5:.1f}" y="{y(t) + 4:.1f}" text-anchor="end">{_num(t)}</text>')
    base = [0.0] * len(labels)
    for s, (name, vals, links) in enumerate(series):
        color = COLORS[s % len(COLORS)]
        for i, v in enumerate(vals):
            x0 = left + slot * i + (slot - group) / 2 + (0 if stacked else s * bar_w)
            lo = base[i] if stacked else 0.0
            y1, y0 = y(lo + v), y(lo)
            out.append(f'<a xlink:href="{escape(links[i])}"><rect x="{x0:.2f}" y="{y1:.2f}" width="{bar_w:.2f}" '
                       f'height="{max(y0 - y1, 0):.2f}" fill="{color}"><title>{escape(labels[i])}: {escape(name)} '
                       f'{_num(v)}</title></rect></a>')
            if stacked:
                base[i] += v
    out.append(f'<line x1="{left:.1f}" x2="{left:.1f}" y1="{top:.1f}" y2="{top + plot_h:.1f}" stroke="#000"/>'
               f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{top + plot_h:.1f}" y2="{top + plot_h:.1f}" stroke="#000"/>')
    for i, label in enumerate(labels):
        x = left + slot * (i + 0.5)
        out.append(f'<text transform="translate({x:.1f} {top + plot_h + 12:.1f}) rotate(-45)" text-anchor="end" '
                   f'style="font-size:10px"><title>{escape(label)}</title>{escape(shown[i])}</text>')
    for s, (name, _, _) in enumerate(series):  # the legend, under the title
        ly = 26 + 14 * (s // per_row)
        x = left + (s % per_row) * plot_w / per_row
        out.append(f'<rect x="{x:.1f}" y="{ly:.1f}" width="10" height="10" fill="{COLORS[s % len(COLORS)]}"/>'
                   f'<text x="{x + 14:.1f}" y="{ly + 9:.1f}" style="font-size:10px">{escape(name)}</text>')
    out.append("</svg>")
    return "".join(out)


__all__ = ["COLORS", "MAX_LABEL", "bar_chart", "nice_ticks", "short_label", "short_labels"]
