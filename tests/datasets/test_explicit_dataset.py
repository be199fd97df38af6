"""The ``saferisks-explicit`` dataset: the shipped pairs, its tasks and prompts, the stats contract, and
re-verification of its pairs in the simulator."""

from __future__ import annotations

import gzip
import json

import pytest
from typer.testing import CliRunner

from safebeal.cli import app
from safebeal.datasets.base import DATASETS
from safebeal.datasets.explicit import EXPLICIT_FILE, ExplicitError, load_explicit_pairs
from safebeal.generation.explicit import verify_pair
from safebeal.planners.prompts import build_messages
from safebeal.safety.taxonomy import SLUGS


@pytest.fixture(scope="module")
def pairs():
    return load_explicit_pairs()


def test_shipped_pairs_cover_every_category_with_300_or_more_requests(pairs):
    assert len(pairs) >= 300
    by_cat = {c: sum(1 for p in pairs if p.category == c) for c in SLUGS}
    assert all(n >= 30 for n in by_cat.values()), by_cat
    assert len({p.id for p in pairs}) == len(pairs)
    # every pair's two requests differ, and neither side is another pair's text
    assert all(p.hazardous.instruction != p.twin.instruction for p in pairs)
    assert all(p.hazardous.plan != p.twin.plan for p in pairs)


def test_stats_contract(pairs):
    r = CliRunner().invoke(app, ["dataset", "stats", "saferisks-explicit", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["hazardous_requests"] == info["harmless_twins"] == len(pairs)
    assert set(info["per_category"]) == set(SLUGS)
    assert sum(d["hazardous_requests"] for d in info["per_category"].values()) == len(pairs)
    assert info["families"] == 92 and sum(info["per_split"].values()) == len(pairs)


def test_tasks_two_per_pair_with_the_request_and_the_refusal_prompt(pairs):
    ds = DATASETS.create("saferisks-explicit:split=test")
    tasks = ds.tasks()
    test_pairs = [p for p in pairs if p.split == "test"]
    assert len(tasks) == 2 * len(test_pairs)
    h, t = tasks[0], tasks[1]
    p = test_pairs[0]
    assert (h.id, t.id) == (f"{p.id}/hazardous", f"{p.id}/twin")
    assert h.instruction == p.hazardous.instruction and t.instruction == p.twin.instruction
    assert h.meta["request"] == {"kind": "hazardous", "pair": p.id, "category": p.category}
    assert t.meta["request"]["kind"] == "twin" and h.reference == t.reference == "\n".join(p.twin.plan)
    assert h.get_goal() == t.get_goal() and list(h.objects) == list(t.objects)
    system = build_messages(h)[0]["content"]
    assert "[REFUSE]" in system
    # other datasets' prompts do not offer the refusal
    other = DATASETS.create("saferisks-test").tasks()[0]
    assert "[REFUSE]" not in build_messages(other)[0]["content"]
    assert len(DATASETS.create("saferisks-explicit:kind=twin,category=breakage").tasks()) == \
        sum(1 for p in pairs if p.category == "breakage")


@pytest.mark.parametrize("arg,message", [("category=fire", "unknown category"), ("split=dev", "split='dev'"),
                                         ("kind=both", "kind='both'")])
def test_bad_dataset_arguments(arg, message):
    with pytest.raises(ExplicitError, match=message):
        DATASETS.create(f"saferisks-explicit:{arg}")


def test_pairs_reverify_and_a_broken_pair_is_caught(pairs):
    picked = [next(p for p in pairs if p.category == c) for c in SLUGS]
    assert all(verify_pair(p) == [] for p in picked)
    bad = picked[0].model_copy(update={"hazardous": picked[0].twin})  # "hazardous" plan that is the safe one
    assert [x["kind"] for x in verify_pair(bad)] == ["unsafe_missed"]
    swapped = picked[1].model_copy(update={"twin": picked[1].hazardous})
    assert "safe_flagged" in [x["kind"] for x in verify_pair(swapped)]


def test_bad_file_names_its_line(tmp_path, pairs):
    rows = gzip.decompress(EXPLICIT_FILE.read_bytes()).decode().splitlines()[:3]
    row = json.loads(rows[1])
    row["twin"]["instruction"] = row["hazardous"]["instruction"]
    rows[1] = json.dumps(row)
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(rows) + "\n")
    with pytest.raises(ExplicitError, match=r"x.jsonl:2: invalid SafeRisks-explicit pair: .*same text"):
        load_explicit_pairs(p)
    r = CliRunner().invoke(app, ["dataset", "stats", "saferisks-explicit", "--path", str(p)])
    assert r.exit_code == 2 and "x.jsonl:2" in r.output
