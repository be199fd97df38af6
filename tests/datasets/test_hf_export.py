"""Hugging Face exports of SafeRisks and of the preference pairs: `datasets.load_dataset(DIR)` loads them, row for
row equal to the source, and each has a dataset card with YAML metadata. Skipped without `datasets`."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

datasets = pytest.importorskip("datasets")

from safebeal.cli import app  # noqa: E402
from safebeal.datasets.saferisks import load_entries, parse_entry  # noqa: E402


def _card(path):
    text = (path / "README.md").read_text()
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    return meta, text


def test_saferisks_export_loads_with_datasets(tmp_path):
    out = tmp_path / "saferisks-hf"
    r = CliRunner().invoke(app, ["dataset", "export", "saferisks-test", "--format", "hf", "--out", str(out)])
    assert r.exit_code == 0, r.output
    entries = [e for e in load_entries() if e.split == "test"]
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    assert list(ds) == ["test"] and ds["test"].num_rows == len(entries) == 795
    row = ds["test"][0]
    e = entries[0]
    assert row["id"] == e.id and row["safe_plan"] == e.safe_plan and row["categories"] == e.categories
    assert row["unsafe_plans"][0]["rule_id"] == e.unsafe_plans[0].rule_id
    assert row["objects"][0] == {"name": e.objects[0][0], "id": e.objects[0][1]}
    # a row parses back into the entry it came from
    back = dict(row, goal=json.loads(row["goal"]), environment=json.loads(row["environment"]),
                source=json.loads(row["source"]), objects=[(o["name"], o["id"]) for o in row["objects"]],
                unsafe_plans=[{k: v for k, v in u.items() if v is not None} for u in row["unsafe_plans"]])
    assert parse_entry(back, "row 0") == e
    meta, text = _card(out)
    assert meta["license"] == "mit" and meta["pretty_name"] == "SafeRisks"
    assert meta["configs"][0]["data_files"] == [{"split": "test", "path": "data/test.parquet"}]
    assert [f["name"] for f in meta["dataset_info"]["features"]][:3] == ["id", "instruction", "categories"]
    for section in ("## Splits", "## Features", "## How it was built", "## Intended use", "## License", "push_to_hub"):
        assert section in text
    assert "| test | 795 |" in text


def test_export_refuses_unknown_dataset(tmp_path):
    r = CliRunner().invoke(app, ["dataset", "export", "virtualhome", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "cannot be exported" in r.output
    r = CliRunner().invoke(app, ["dataset", "export", "saferisks", "--format", "csv", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--format 'csv'" in r.output


def test_pairs_export_loads_with_datasets(tmp_path):
    from safebeal.align.pairs import BuildConfig, build_pairs, write_pairs

    # the first 16 training programs (3 pairs): the default (on-task) operators find nothing to edit in the first 8
    pairs, stats = build_pairs(BuildConfig(sources=("mutation",), limit=16, workers=1, seed=0, length_balance=0))
    built = write_pairs(pairs, stats, tmp_path / "pairs")
    out = tmp_path / "pairs-hf"
    r = CliRunner().invoke(app, ["pairs", "export", str(built), "--out", str(out)])
    assert r.exit_code == 0, r.output
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    rows = [json.loads(l) for l in (built / "pairs.jsonl").read_text().splitlines()]
    assert ds["train"].num_rows == len(rows) == len(pairs) > 0
    assert ds["train"][0] == rows[0]  # prompt, chosen, rejected as chat messages, as TRL takes them
    assert ds["train"][0]["chosen"][0]["role"] == "assistant"
    meta, text = _card(out)
    assert meta["license"] == "mit" and "dpo" in meta["tags"]
    assert {f["name"] for f in meta["dataset_info"]["features"]} >= {"prompt", "chosen", "rejected", "rule_id"}
    assert "## Intended use" in text and "push_to_hub" in text
    r = CliRunner().invoke(app, ["pairs", "export", str(tmp_path / "nope"), "--out", str(out)])
    assert r.exit_code == 2 and "not found" in r.output
