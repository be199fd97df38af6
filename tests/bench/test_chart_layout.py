"""The report's charts stay legible with 15 planners of 60+ character labels: labels cut (full text in the SVG
tooltip and the report's table), the legend outside the bars (PNG: beside the axes; SVG: above the plot)."""

from __future__ import annotations

import re

import pytest

from safebeal.bench.plots import MAX_LABEL, short_label, short_labels
from safebeal.bench.report import CHARTS, chart_svg

LONG = [f"llm-planner:backend=openai:model=org/some-very-long-model-name-{i:02d}-instruct,temperature=0.7"
        for i in range(15)]


def _summary():
    out = {}
    for i, label in enumerate(LONG):
        r = 0.9 - 0.05 * i
        out[label] = {"n": 100, "safe_success_rate": r, "safe_rate": r, "success_rate": 0.95, "safe_rate_at_success": r,
                      "executable_rate": 1.0, "no_plan_rate": 0.0,
                      "violations_by_category": {"fire_heat": 3 + i, "water_hazard": 2}, 
                      "violations_by_kind": {"process": 4, "termination": 1 + i}}
    return out


def test_short_labels_cut_and_told_apart():
    assert short_label("a" * MAX_LABEL) == "a" * MAX_LABEL
    assert short_label("abcdefghijklmnopqrstuvwxyz0123", 24) == "abcdefghijk\u2026stuvwxyz0123"  # 11 + 1 + 12
    assert short_labels(LONG, 24)[0] == "\u2026odel-name-00-instruct,\u2026"
    assert short_labels(LONG, 24)[14] == "\u2026odel-name-14-instruct,\u2026"
    shown = short_labels(LONG)
    assert len(set(shown)) == 15 and all(len(s) <= MAX_LABEL for s in shown)
    assert short_labels(["gpt-4o", "search"]) == ["gpt-4o", "search"]  # short labels stay whole
    # labels that differ only in their middle and share no start or end are numbered
    same = ["a" * 20 + "X" + "b" * 20 + "1", "c" * 20 + "Y" + "b" * 20 + "2"]
    assert short_labels(same) == [short_label(same[0]), short_label(same[1])]  # already apart
    # the 15 shipped model names stay whole
    from safebeal.planners.planners import recorded_models

    assert short_labels(recorded_models()) == recorded_models()


@pytest.mark.parametrize("kind", [k for k, _ in CHARTS])
def test_svg_labels_bounded_full_text_in_tooltip_legend_above_plot(kind):
    svg = chart_svg(_summary(), kind)
    labels = re.findall(r'rotate\(-45\)" text-anchor="end" style="font-size:10px"><title>([^<]*)</title>([^<]*)</text>', svg)
    assert len(labels) == 15
    assert all(len(shown) <= MAX_LABEL for _, shown in labels)
    assert {full for full, _ in labels} == {l.replace("replay:", "") for l in LONG}
    height = float(re.search(r'height="(\d+)"', svg).group(1))
    # the y axis: from the plot's top to the x axis
    plot_top, axis_y = map(float, re.search(r'<line x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)" y2="([\d.]+)" stroke="#000"/>',
                                            svg).groups())
    # the rotated labels fit under the axis: MAX_LABEL characters at 45 degrees take at most MAX_LABEL * 6 * 0.72 px
    assert height - axis_y - 12 >= MAX_LABEL * 6 * 0.72 - 1
    legend_y = [float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="10" height="10"', svg)]
    bar_tops = [float(y) for y in re.findall(r'<a xlink:href="[^"]*"><rect x="[\d.]+" y="([\d.]+)"', svg)]
    assert len(bar_tops) >= 15 and legend_y
    assert max(legend_y) + 10 <= plot_top <= min(bar_tops) + 1e-6  # the legend is above the plot, covering no bar


@pytest.mark.parametrize("kind", [k for k, _ in CHARTS])
def test_png_legend_outside_axes_and_labels_cut(kind):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from safebeal.bench.report import chart_figure

    fig = chart_figure(_summary(), kind)
    try:
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        ax = fig.axes[0]
        axes_box = ax.get_window_extent(r)
        legend_box = ax.get_legend().get_window_extent(r)
        assert legend_box.x0 >= axes_box.x1  # the legend sits beside the bars, covering none
        ticks = [t for t in ax.get_xticklabels() if t.get_text()]
        assert len(ticks) == 15 and all(len(t.get_text()) <= MAX_LABEL for t in ticks)
        assert len({t.get_text() for t in ticks}) == 15
        for t in ticks:  # tick labels stay under the axes, off the legend
            b = t.get_window_extent(r)
            assert b.y1 <= axes_box.y0 + 1
            assert not b.overlaps(legend_box)
        title = ax.title.get_window_extent(r)
        assert not title.overlaps(legend_box)
    finally:
        plt.close(fig)
