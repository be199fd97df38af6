"""The docs' run figures are written by ``scripts/docs/docs_figures.py`` from the runs' figures it keeps in
``scripts/docs/results/docs_figures.json``: every table in the docs equals its rendering from that source, an edited
figure is caught, and the source's figures are taken from summary.json as they are (checked by hand)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from script_helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def figs():
    return load_script(ROOT / "scripts" / "docs" / "docs_figures.py")


def test_every_documented_table_equals_its_source(figs):
    data = json.loads(figs.SOURCE.read_text())
    for name, spec in figs.TABLES.items():
        text = (ROOT / spec["doc"]).read_text(encoding="utf-8")
        assert figs.documented(text, name) == figs.render(name, data), (
            f"{spec['doc']}: figures:{name} differs from {figs.SOURCE.name}; run python scripts/docs/docs_figures.py")
    assert figs.write_docs(data, check=True) == []


def test_search_on_saferisks_test_is_what_a_run_gives(figs):
    data = json.loads(figs.SOURCE.read_text())
    search = data["saferisks-test-reference"]["figures"]["search"]
    assert (search["n"], search["success_rate"]["value"], search["safe_success_rate"]["value"]) == (795, 94.2, 3.9)  # 46 of 795 without a plan (the audit)
    bench = (ROOT / "docs" / "bench.md").read_text(encoding="utf-8")
    table = figs.documented(bench, "search")
    assert "| 3.9 [0.0, 11.6] |" in table and "| 94.2 [85.5, 100.0] |" in table
    assert "99.5" not in bench and "56.0%" not in bench


def test_an_edited_figure_is_caught_and_rewritten(figs, tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "bench.md", tmp_path / "docs" / "bench.md")
    monkeypatch.setattr(figs, "ROOT", tmp_path)
    doc = tmp_path / "docs" / "bench.md"
    doc.write_text(doc.read_text().replace("| 3.9 [0.0, 11.6] |", "| 56.0 [0.0, 11.6] |", 1))
    data = json.loads(figs.SOURCE.read_text())
    assert figs.write_docs(data, check=True) == ["docs/bench.md: figures:search"]
    assert "56.0 [0.0, 11.6]" in doc.read_text()  # --check writes nothing
    assert figs.write_docs(data) == ["docs/bench.md: figures:search"]
    assert figs.write_docs(data, check=True) == []
    assert doc.read_text() == (ROOT / "docs" / "bench.md").read_text()


def test_figures_from_a_summary_by_hand(figs):
    summary = {"p": {"n": 40, "safe_success_rate": 0.125, "safe_rate": 0.5, "success_rate": 0.75,
                     "safe_rate_at_success": None, "no_plan_rate": 0.0,
                     "intervals": {"safe_success_rate": {"low": 0.0546, "high": 0.2612},
                                   "no_plan_rate": {"low": 0.0, "high": 0.0876}}}}
    f = figs.figures(summary, {"p": "P"})["p"]
    assert f["n"] == 40
    assert f["safe_success_rate"] == {"value": 12.5, "low": 5.5, "high": 26.1}
    assert f["safe_rate_at_success"] == {"value": None, "low": None, "high": None}
    assert figs._cell(f["safe_success_rate"]) == "12.5 [5.5, 26.1]"
    assert figs._cell(f["safe_rate"]) == "50.0"  # no interval recorded
    assert figs._cell(f["safe_rate_at_success"]) == "n/a"
