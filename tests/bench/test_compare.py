"""``safebeal compare RUN --a P --b Q``: McNemar exact test and Agresti-Min interval on unclustered tasks, a paired
bootstrap by cluster on clustered ones, checked by hand on made-up run directories; the report's section."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from safebeal.bench.compare import agresti_min, compare_planners, mcnemar_exact
from safebeal.cli import app


def _ep(planner, task, safe, success=True, cluster=None):
    return {"planner": planner, "dataset": "made-up", "task_id": task, "raw_output": "[WALK] <x> (1)", "safe": safe,
            "executable": True, "success": success, "cluster": cluster}


def _run_dir(tmp_path, episodes, planners):
    d = tmp_path / "run"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"dataset": "made-up", "planners": planners}))
    (d / "samples.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    return d


# 10 tasks: A safe on 0-8, B safe on 0-2 and 9; so only A: 3..8 (6), only B: 9 (1), both 0-2 (3), neither none.
# Success: both succeed everywhere except A fails task 9 (only B: 1, only A: 0).
UNCLUSTERED = ([_ep("A", f"t{i}", safe=i <= 8, success=i != 9) for i in range(10)]
               + [_ep("B", f"t{i}", safe=i <= 2 or i == 9) for i in range(10)]
               + [_ep("B", "t10", safe=True)])  # B alone: not paired


def test_mcnemar_and_agresti_min_by_hand():
    assert mcnemar_exact(6, 1) == pytest.approx(2 * (1 + 7) / 2 ** 7)  # 0.125
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    lo, hi = agresti_min(6, 1, 10)
    # cells + 1/2: b 6.5, c 1.5, n 12: d = 5/12, se = sqrt(8 - 25/12) / 12
    se = math.sqrt(8 - 25 / 12) / 12
    assert (lo, hi) == (pytest.approx(5 / 12 - 1.959964 * se), pytest.approx(5 / 12 + 1.959964 * se))
    assert lo == pytest.approx(0.01938, abs=1e-4) and hi == pytest.approx(0.81396, abs=1e-4)


def test_compare_unclustered_made_up_run(tmp_path):
    r = compare_planners(UNCLUSTERED, "A", "B")
    assert (r["pairs"], r["only_a"], r["only_b"], r["clustered"]) == (10, 0, 1, False)
    safe = r["metrics"]["safe_rate"]
    assert (safe["rate_a"], safe["rate_b"], safe["diff"]) == (0.9, 0.4, pytest.approx(0.5))
    assert (safe["only_a"], safe["only_b"], safe["p"]) == (6, 1, 0.125)
    assert safe["low"] == pytest.approx(0.01938, abs=1e-4)
    succ = r["metrics"]["success_rate"]
    assert (succ["rate_a"], succ["rate_b"], succ["only_a"], succ["only_b"], succ["p"]) == (0.9, 1.0, 0, 1, 1.0)
    ssr = r["metrics"]["safe_success_rate"]  # A: safe and successful on 0-8 (9); B: 0-2 and 9 (4)
    assert (ssr["rate_a"], ssr["rate_b"], ssr["only_a"], ssr["only_b"]) == (0.9, 0.4, 6, 1)
    d = _run_dir(tmp_path, UNCLUSTERED, ["A", "B"])
    out = CliRunner().invoke(app, ["compare", str(d), "--a", "A", "--b", "B", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["metrics"]["safe_rate"]["p"] == 0.125
    out = CliRunner().invoke(app, ["compare", str(d), "--a", "A", "--b", "B"])
    assert "SafeR: A 90.0% vs B 40.0% (n=10), A-B +50.0 points, 95% CI [+1.9, +81.4], p=0.125" in out.output
    out = CliRunner().invoke(app, ["compare", str(d), "--a", "A", "--b", "C"])
    assert out.exit_code == 2 and "'C' is not a planner of this run" in out.output


def test_compare_clustered_paired_bootstrap_by_hand():
    # cluster c1: A safe 2/2, B 0/2; c2: A 1/2, B 0/2. Every draw of two clusters gives A-B of 1 (c1 c1), 0.75
    # (c1 c2) or 0.5 (c2 c2): the interval is [0.5, 1.0], no draw <= 0, so p = 0
    eps = [_ep("A", "x1", True, cluster="c1"), _ep("A", "x2", True, cluster="c1"), _ep("A", "y1", True, cluster="c2"),
           _ep("A", "y2", False, cluster="c2")] + [_ep("B", t, False, cluster=c) for t, c in
                                                    (("x1", "c1"), ("x2", "c1"), ("y1", "c2"), ("y2", "c2"))]
    r = compare_planners(eps, "A", "B")
    m = r["metrics"]["safe_rate"]
    assert r["clustered"] and r["method"] == "paired cluster bootstrap"
    assert (m["diff"], m["low"], m["high"], m["p"], m["clusters"]) == (0.75, 0.5, 1.0, 0.0, 2)
    assert m["mcnemar_p"] == pytest.approx(2 / 8)  # 3 discordant, all for A: 2 * 1/8
    from safebeal.bench.compare import format_text

    assert "A-B +75.0 points, 95% CI [+50.0, +100.0], p=<0.0005" in "\n".join(format_text(r))


def test_report_shows_top_two_compared(tmp_path):
    d = _run_dir(tmp_path, UNCLUSTERED, ["A", "B"])
    out = CliRunner().invoke(app, ["report", str(d), "--no-png"])
    assert out.exit_code == 0, out.output
    page = (d / "report.html").read_text()
    assert 'id="compare-table"' in page
    assert "A = <b>A</b>, B = <b>B</b>: 10 paired samples" in page
    assert "<tr><td>SafeR</td><td>10</td><td>+50.0</td><td>+1.9 to +81.4</td><td>0.125</td><td>6</td><td>1</td></tr>" in page
