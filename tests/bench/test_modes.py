"""Open-loop and step-by-step planners of one backend, side by side (safebeal.bench.modes): which planners pair,
their rates and the paired difference, in the CLI and report.html."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from safebeal.bench.modes import mode_pairs, modes_markdown, side_by_side
from safebeal.cli import app

A = {"name": "mock", "responses": "echo"}
B = {"model": "gpt-x", "base_url": "http://h"}


def _conf(name, backend, safety=False):
    return {"name": name, "backend": backend, "safety_prompt": safety}


CONFIG = {"planners": ["few-shot/mock", "zero-shot/mock", "react/mock", "act/mock:safety_prompt=true",
                       "few-shot/gpt-x", "act/gpt-x", "search"],
          "planner_configs": {"few-shot/mock": _conf("few-shot", A), "zero-shot/mock": _conf("zero-shot", A),
                              "react/mock": _conf("react", A), "act/mock:safety_prompt=true": _conf("act", A, True),
                              "few-shot/gpt-x": _conf("few-shot", B), "act/gpt-x": _conf("act", B),
                              "search": {"name": "search"}}}


def _ep(planner, task, ok):
    return {"planner": planner, "task_id": task, "epoch": None, "cluster": None, "success": ok, "executable": ok,
            "safe": ok, "parse_error": None, "generation_error": None, "violations": [], "raw_output": "[WALK] <a> (1)"}


def test_pairs_share_a_backend_and_the_safety_prompt():
    summary = {l: {} for l in CONFIG["planners"]}
    assert mode_pairs(summary, CONFIG) == [("few-shot/mock", "react/mock"), ("zero-shot/mock", "react/mock"),
                                           ("few-shot/gpt-x", "act/gpt-x")]


def test_rates_and_the_paired_difference_counted_by_hand():
    cfg = {"planners": ["few-shot/gpt-x", "act/gpt-x"], "planner_configs": CONFIG["planner_configs"]}
    eps = [_ep("few-shot/gpt-x", f"t{i}", i == 0) for i in range(4)] + [_ep("act/gpt-x", f"t{i}", i < 3) for i in range(4)]
    summary = {"few-shot/gpt-x": {"safe_success_rate": 0.25, "safe_rate": 0.25, "success_rate": 0.25, "executable_rate": 0.25},
               "act/gpt-x": {"safe_success_rate": 0.75, "safe_rate": 0.75, "success_rate": 0.75, "executable_rate": 0.75,
                             "agent": {"turns": 9}}}
    [row] = side_by_side(summary, cfg, eps)
    assert row["model"] == "gpt-x" and row["rates"]["safe_success_rate"] == [0.25, 0.75]
    ssr = row["paired"]["metrics"]["safe_success_rate"]
    assert row["paired"]["pairs"] == 4 and ssr["diff"] == 0.5 and ssr["p"] == 0.5  # McNemar: 2 discordant, both one way
    md = modes_markdown([row])
    assert "| gpt-x | few-shot/gpt-x | act/gpt-x | 25.0 / 75.0 |" in md and "+50.0 [" in md
    assert "No pair" in modes_markdown([])


def test_cli_and_report_show_both_modes_on_a_dataset_with_goals(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["bench", "--dataset", "virtualhome", "--limit", "2", "--planner", "few-shot",
                                 "--planner", "react", "--planner", "act:safety_prompt=true", "--backend", "mock",
                                 "--workers", "1", "--no-png", "--out", str(out)])
    assert r.exit_code in (0, 1), r.output  # the echo mock gives the agents nothing to run: no plan, on purpose
    r = CliRunner().invoke(app, ["report", str(out), "--modes", "--json", "--no-png"])
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.output)
    assert (row["open_loop"], row["step_by_step"], row["paired"]["pairs"]) == ("few-shot/mock", "react/mock", 2)
    assert '<table id="modes">' in (out / "report.html").read_text()
