"""The report's SVG bar charts (safebeal.bench.plots): tick steps, bar geometry and links, checked by hand."""

import re

from safebeal.bench.plots import bar_chart, nice_ticks


def test_nice_ticks():
    assert nice_ticks(100) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(35) == [0, 10, 20, 30, 40]  # 35 / 5 = 7 -> a step of 10
    assert nice_ticks(12) == [0, 2.5, 5, 7.5, 10, 12.5]  # 12 / 5 = 2.4 -> 2.5
    assert nice_ticks(3) == [0, 1, 2, 3]
    assert nice_ticks(0) == [0, 1]


def _rects(svg):
    """(href, y, height) of every linked bar."""
    return [(h, float(y), float(ht)) for h, y, ht in
            re.findall(r'<a xlink:href="([^"]*)"><rect x="[^"]*" y="([^"]*)" width="[^"]*" height="([^"]*)"', svg)]


def test_grouped_bars_heights_and_links():
    svg = bar_chart(["a", "b"], [("SSR", [50.0, 100.0], ["#planner=a", "#planner=b&outcome=unsafe"])],
                    title="t <1>", ylabel="%", ymax=100.0, height=300.0)
    bars = _rects(svg)
    assert [h for h, _, _ in bars] == ["#planner=a", "#planner=b&amp;outcome=unsafe"]  # escaped in the SVG
    (_, y_a, h_a), (_, y_b, h_b) = bars
    assert abs(h_b - 2 * h_a) < 0.02  # 100 is twice as tall as 50
    assert abs((y_a + h_a) - (y_b + h_b)) < 0.02  # both start at the x axis
    assert "t &lt;1&gt;" in svg and svg.count("<svg") == 1 and svg.endswith("</svg>")


def test_stacked_bars_sit_on_each_other():
    svg = bar_chart(["m"], [("fire", [2.0], ["#1"]), ("water", [3.0], ["#2"])], title="v", ylabel="n", stacked=True)
    (_, y_fire, h_fire), (_, y_water, h_water) = _rects(svg)
    assert abs(y_water + h_water - y_fire) < 0.02  # water's bottom is fire's top
    assert abs(h_water / h_fire - 1.5) < 0.01
    assert ">5</text>" in svg and ">6</text>" not in svg  # the y axis ends at the stack's top, 5 (steps of 1)
