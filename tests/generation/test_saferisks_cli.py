"""CLI: saferisks build, dataset list / validate / stats, and clean one-line errors."""

import json

import pytest
from typer.testing import CliRunner

from safebeal.cli import app
from safebeal.datasets.saferisks import DATA_FILE, load_entries

runner = CliRunner()
shipped_only = pytest.mark.skipif(not DATA_FILE.is_file(), reason="the shipped SafeRisks file is not built")


def test_dataset_list_names_the_saferisks_datasets():
    r = runner.invoke(app, ["dataset", "list", "--json"])
    assert r.exit_code == 0, r.output
    names = {d["name"] for d in json.loads(r.output)}
    assert {"saferisks", "saferisks-train", "saferisks-test", "virtualhome"} <= names


def test_build_validate_and_stats_a_small_file(tmp_path):
    out = tmp_path / "small.jsonl.gz"
    r = runner.invoke(app, ["saferisks", "build", "--seed", "2", "--out", str(out), "--workers", "1",
                            "--family", "food_safety.fridge_left_open_fetch", "--count", "8", "--audit"])
    assert r.exit_code == 0, r.output
    assert "wrote 8 entries" in r.output and (tmp_path / "small.rejections.jsonl.gz").is_file()
    assert "search audit: 8/8 shortest plans unsafe" in r.output and (tmp_path / "small.audit.json.gz").is_file()
    es = load_entries(out)
    assert len(es) == 8 and {e.family for e in es} == {"food_safety.fridge_left_open_fetch"}
    r = runner.invoke(app, ["dataset", "validate", "saferisks", "--path", str(out), "--limit", "5", "--json",
                            "--workers", "1"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["valid"] == 5 and rep["per_category"]["food_safety"] == {"valid": 5, "invalid": 0}
    r = runner.invoke(app, ["dataset", "stats", "saferisks", "--path", str(out), "--out", str(tmp_path / "figs"),
                            "--json", "--no-search"])  # the audit comes from the build's sidecar
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    # the shortest plan to each goal fetches the food and leaves the fridge open: unsafe in all 8
    assert info["per_category"]["food_safety"] == {"entries": 8, "families": 1, "families_test": es[0].split == "test",
                                                   "search_unsafe_share": 1.0, "search_no_plan_share": 0.0,
                                                   "search_unsafe_in_category_share": 1.0,
                                                   "search_own_hazard_share": 1.0, "patterns": 1,
                                                   "max_pattern_share": 1.0,
                                                   "test_patterns": int(es[0].split == "test"),
                                                   # a train family (the split's salted hash): no test entry to tidy
                                                   "generic_rule_ssr_test": None if es[0].split == "train" else 1.0}
    assert info["patterns"] == 1 and info["test_patterns_in_train"] == 0  # one family: one split
    assert info["top_objects"][0][1] == 8  # the fridge, in all
    # v2: spread over procedural homes and the apartment; the 8 entries land in 8 different ones
    assert info["homes"] == 8 and info["max_home_share"] == 0.125 and info["search_unsafe_share"] == 1.0
    assert info["search_own_hazard_share"] == 1.0
    for f in info["figures"]:
        assert open(f, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_validate_reports_an_invalid_entry(tmp_path):
    out = tmp_path / "one.jsonl"
    runner.invoke(app, ["saferisks", "build", "--out", str(out), "--workers", "1", "--count", "3",
                        "--family", "cut_injury.receipt_from_the_bin"])
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    rows[0]["unsafe_plans"][0]["plan"] = rows[0]["safe_plan"]  # now the detector finds nothing to flag
    out.write_text("".join(json.dumps(x) + "\n" for x in rows[:3]))
    r = runner.invoke(app, ["dataset", "validate", "saferisks", "--path", str(out), "--workers", "1"])
    assert r.exit_code == 1
    assert "2/3 entries valid" in r.output and "unsafe_missed" in r.output


def test_errors_are_one_line(tmp_path):
    r = runner.invoke(app, ["dataset", "validate", "virtualhome"])
    assert r.exit_code == 2 and "error:" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["dataset", "validate", "saferisks", "--path", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 2 and "not found" in r.output
    r = runner.invoke(app, ["saferisks", "build", "--out", str(tmp_path / "x.jsonl"), "--family", "no.such"])
    assert r.exit_code == 2 and "unknown family" in r.output
