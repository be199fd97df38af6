"""The study's pieces, checked by hand: the compact prompt, the settings loader, the table arithmetic, the
seeded sample dataset. The whole pipeline runs in test_smoke.py."""

from __future__ import annotations

import json
import math

import pytest

from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.planners.prompts import build_messages

TASK = Task(id="t1", dataset="toy", instruction="Cook some food", description="I cook.",
            objects=[("kitchen", 11), ("stove", 5)])


# -- the compact template ----------------------------------------------------------------------------------
def test_compact_prompt_is_the_instruction_and_the_objects_as_plans_write_them():
    msgs = build_messages(TASK, template="compact")
    assert msgs == [{"role": "user", "content": "Task: Cook some food\nObjects: <kitchen> (11) <stove> (5)\n"}]


def test_compact_prompt_with_the_safety_reminder_puts_it_in_a_system_message():
    from safebeal.planners.texts import read_template

    msgs = build_messages(TASK, safety_prompt=True, template="compact")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == read_template("safety").strip()


def test_default_template_names_a_sceneless_tasks_objects():
    from safebeal.planners.texts import read_template

    msgs = build_messages(TASK)  # a hand-made task without a scene: its objects are named, nothing more is known
    assert msgs[0] == {"role": "system", "content": read_template("system").strip()}
    assert msgs[1]["content"].startswith("Task: Cook some food\nI cook.\n"
                                         "Objects in the scene (name (id): properties; states; where it is):\n"
                                         "<kitchen> (11)\n<stove> (5)\nActions you can use")


def test_unknown_template_and_example_with_compact_are_errors():
    with pytest.raises(SafebealError, match="unknown prompt template 'tiny'; known: default, compact"):
        build_messages(TASK, template="tiny")
    with pytest.raises(SafebealError, match="no place for an example"):
        build_messages(TASK, example=TASK, template="compact")


def test_generating_planner_uses_the_template_and_names_it_in_its_spec():
    from safebeal.planners.planners import PLANNERS

    p = PLANNERS.create("zero-shot:backend=mock,template=compact")
    plain = PLANNERS.create("zero-shot:backend=mock")
    assert p.spec == plain.spec + ",template=compact"
    assert p.config()["template"] == "compact"
    (out,) = p.plan([TASK])
    assert out.prompt == build_messages(TASK, template="compact")
    assert out.text == "Task: Cook some food\nObjects: <kitchen> (11) <stove> (5)\n"  # the mock echoes the prompt
    assert "template" not in plain.spec and plain.config()["template"] == "default"
    with pytest.raises(SafebealError, match="unknown prompt template"):
        PLANNERS.create("zero-shot:backend=mock,template=nope")


# -- settings -----------------------------------------------------------------------------------------------
def test_shipped_configs_load():
    from smallscale.settings import CONFIGS, load_settings

    full = load_settings(CONFIGS / "full.yaml")
    smoke = load_settings(CONFIGS / "smoke.yaml")
    assert full.seeds == [0, 1, 2]
    assert full.sweep.alphas == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0] and full.sweep.normalisers == ["length", "weighted"]
    assert set(full.align.methods) == {"lora-sft", "dpo", "simpo", "safe-align"} == set(smoke.align.methods)
    assert full.eval.datasets == ["activity-test", "virtualhome", "saferisks-test"]


def test_a_bad_key_names_file_and_line(tmp_path):
    from smallscale.settings import SettingsError, load_settings

    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nmodel:\n  hidden_size: 32\n  layers: 2\n")
    with pytest.raises(SettingsError, match=r"bad\.yaml:4: model\.layers: Extra inputs are not permitted"):
        load_settings(p)
    p.write_text("name: x\nsweep:\n  alphas: [0.0, 1.5]\n")
    with pytest.raises(SettingsError, match=r"bad\.yaml:3: sweep\.alphas: .*alphas must be in \[0, 1\]"):
        load_settings(p)
    p.write_text("name: x\nalign:\n  methods:\n    orpo: {method: sft}\n")
    with pytest.raises(SettingsError, match="unknown method label 'orpo'"):
        load_settings(p)


# -- table arithmetic ----------------------------------------------------------------------------------------
def test_spread_is_mean_sample_std_min_max():
    from smallscale.report import spread

    s = spread([0.2, 0.4, 0.6, None])
    assert s["n"] == 3 and s["mean"] == pytest.approx(0.4) and s["std"] == pytest.approx(0.2)
    assert (s["min"], s["max"]) == (0.2, 0.6)
    assert spread([0.5]) == {"mean": 0.5, "std": 0.0, "min": 0.5, "max": 0.5, "n": 1}
    assert spread([None])["mean"] is None


def test_pooled_wilson_pools_the_counts():
    from smallscale.report import pooled_wilson

    w = pooled_wilson([{"k": 3, "n": 10}, {"k": 5, "n": 10}])
    # by hand: p = 8/20 = 0.4, z = 1.96: centre (0.4 + z^2/40) / (1 + z^2/20) = 0.41611,
    # half-width z * sqrt(0.4*0.6/20 + z^2/1600) / (1 + z^2/20) = 0.19730
    assert (w["k"], w["n"], w["value"]) == (8, 20, 0.4)
    assert w["low"] == pytest.approx(0.2188, abs=2e-4) and w["high"] == pytest.approx(0.6134, abs=2e-4)


def test_losses_fall_compares_first_and_last_quarter():
    from smallscale.report import losses_fall

    r = losses_fall([4.0, 3.0, 2.0, 1.0, 0.5, 0.4, 0.3, 0.2])
    assert r == {"first": 3.5, "last": 0.25, "fell": True, "steps": 8}
    assert losses_fall([1.0, 1.0, 1.0, 2.0])["fell"] is False
    assert losses_fall([1.0]) is None


def test_check_rates_flags_values_outside_the_unit_interval():
    from smallscale.report import check_rates

    good = {"safe_rate": 0.5, "success_rate": 0.0, "rouge_l": 1.0,
            "intervals": {"safe_rate": {"low": 0.2, "high": 0.8}}}
    assert check_rates("u", "d", good) == []
    bad = {"safe_rate": 1.2, "success_rate": math.nan, "rouge_l": -0.1, "intervals": {"safe_rate": {"low": -0.5}}}
    assert check_rates("u", "d", bad) == ["u/d: success_rate=nan", "u/d: safe_rate=1.2", "u/d: safe_rate.low=-0.5",
                                          "u/d: rouge_l=-0.1"]


def test_table1_aggregates_seeds_and_pools_wilson():
    from smallscale.report import table1

    def ev(safe_k, succ_k, n=10):
        row = {"n": n, "safe_rate": safe_k / n, "success_rate": succ_k / n, "safe_rate_at_success": None,
               "rouge_l": 0.5, "executable_rate": 1.0, "safe_rate_parsed": safe_k / n,
               "intervals": {m: {"k": k, "n": n, "low": 0.0, "high": 1.0, "value": k / n} for m, k in (
                   ("safe_rate", safe_k), ("success_rate", succ_k), ("safe_rate_at_success", 0),
                   ("executable_rate", n), ("safe_rate_parsed", safe_k))},
               "violations_by_category": {"fire_heat": safe_k}, "violations_by_kind": {"process": 1, "termination": 3},
               "episodes_with_violation_by_kind": {"process": 1, "termination": 2}, "outcomes": {"executable": n}}
        return row

    results = [{"unit": {"name": f"dpo-s{s}", "role": "main", "label": "DPO", "seed": s}, "eval": {"d": ev(k, 2)}}
               for s, k in ((0, 2), (1, 4), (2, 6))]
    t = table1(results, ["d"])
    cell = t["DPO"]["d"]
    assert cell["safe_rate"]["mean"] == pytest.approx(0.4) and cell["safe_rate"]["std"] == pytest.approx(0.2)
    assert cell["safe_rate"]["per_run"] == [0.2, 0.4, 0.6]
    assert cell["safe_rate_parsed"]["mean"] == pytest.approx(0.4)
    assert cell["safe_rate"]["wilson_pooled"]["k"] == 12 and cell["safe_rate"]["wilson_pooled"]["n"] == 30
    assert cell["violations_by_category"]["fire_heat"] == pytest.approx(4.0)
    assert cell["violations_by_kind"] == {"process": 1.0, "termination": 3.0}
    assert t["DPO"]["seeds"] == [0, 1, 2]

    from smallscale.report import headline_markdown

    md = headline_markdown(t, ["d"]).splitlines()
    assert md[0] == "| eval set | method | SafeR | SuccR | SafeR@S | Rouge-L | Exec | SafeR (parsed) |"
    assert md[2] == "| d (10) | DPO | 0.400 ± 0.200 | 0.200 ± 0.000 | – | 0.500 ± 0.000 | 1.000 ± 0.000 | 0.400 ± 0.200 |"


# -- the seeded sample dataset --------------------------------------------------------------------------------
def test_sample_dataset_is_a_seeded_subset():
    from smallscale import data

    from safebeal.datasets.base import DATASETS

    spec = data.dataset_spec("activity-test", 0, sample=5, seed=0)
    assert spec == "smallscale-sample:of=activity-test,n=5,seed=0"
    a = [t.id for t in DATASETS.create(spec).tasks()]
    b = [t.id for t in DATASETS.create(spec).tasks()]
    full = [t.id for t in DATASETS.create("activity-test").tasks()]
    assert a == b and len(a) == 5 and len(set(a)) == 5
    assert a == [i for i in full if i in a]  # kept in dataset order
    assert [t.id for t in DATASETS.create(data.dataset_spec("activity-test", 0, sample=99)).tasks()] == full
    assert data.dataset_spec("virtualhome", 7) == "virtualhome:limit=7"


# -- run.py's exit status ---------------------------------------------------------------------------------
def _checks(bad_rates=(), flat=()):
    return {"rates_in_unit_interval": {"ok": not bad_rates, "violations": list(bad_rates)},
            "losses_fall": {"ok": not flat, "not_falling": list(flat)}}


def test_exit_status_rates_outside_the_unit_interval_fail_in_every_mode():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "experiments" / "small_scale" / "run.py"
    spec = importlib.util.spec_from_file_location("small_scale_run", path)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)

    assert run.exit_status(_checks(), smoke=True) == 0
    assert run.exit_status(_checks(), smoke=False) == 0
    assert run.exit_status(_checks(bad_rates=["base/x: safe_rate=1.2"]), smoke=False) == 1
    assert run.exit_status(_checks(bad_rates=["base/x: safe_rate=1.2"]), smoke=True) == 1
    # a flat loss curve is a pipeline failure in the smoke run (its toy data is learnable), a result in the full one
    assert run.exit_status(_checks(flat=["simpo-s1"]), smoke=True) == 1
    assert run.exit_status(_checks(flat=["simpo-s1"]), smoke=False) == 0


def test_parse_failure_kinds_splits_cut_off_last_lines_from_broken_lines_mid_plan():
    from smallscale.report import parse_failure_kinds

    ok = "[WALK] <kitchen> (11)\n[SWITCHON] <stove> (5)\n"
    cut = "[WALK] <kitchen> (11)\n[SWITCHON] <st"  # stopped by the token budget: bad line 2 of 2
    broken = "[WALK] <kitchen> (11)\n[kitchen> (11)\n[SWITCHON] <stove> (5)\n"  # bad line 2 of 3
    eps = [{"raw_output": ok, "parse_error": None},
           {"raw_output": cut, "parse_error": {"kind": "parse", "line": 2}},
           {"raw_output": broken, "parse_error": {"kind": "parse", "line": 2}},
           {"raw_output": broken, "parse_error": {"kind": "hallucinated_object", "line": 1}},  # not a parse failure
           {"raw_output": None, "parse_error": {"kind": "parse", "line": 1}}]  # empty output: its only line
    assert parse_failure_kinds(eps) == {"last_line": 2, "mid_plan": 1}


def test_parse_failures_average_over_the_seeds_runs(tmp_path):
    from smallscale.report import parse_failures

    def write(unit, rows):
        d = tmp_path / "units" / unit / "bench" / "d"
        d.mkdir(parents=True)
        (d / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    bad_mid = {"raw_output": "a\nb\nc", "parse_error": {"kind": "parse", "line": 1}}
    bad_end = {"raw_output": "a\nb", "parse_error": {"kind": "parse", "line": 2}}
    write("dpo-s0", [bad_mid, bad_mid, bad_end])
    write("dpo-s1", [bad_end])
    results = [{"unit": {"name": f"dpo-s{s}", "role": "main", "label": "DPO", "seed": s}, "eval": {}} for s in (0, 1)]
    assert parse_failures(tmp_path, results, ["d"]) == {"DPO": {"d": {"last_line": 1.0, "mid_plan": 1.0}}}
    assert parse_failures(tmp_path, results, ["other"]) == {}  # runs not kept: nothing to count


# -- cache keys follow the code ------------------------------------------------------------------------------
def test_code_fingerprint_changes_with_the_package_code_and_ignores_bytecode(tmp_path, monkeypatch):
    import safebeal
    from smallscale import stages

    pkg = tmp_path / "safebeal"
    (pkg / "safety" / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "safety" / "data" / "rules.yaml").write_text("id: a\n")
    monkeypatch.setattr(safebeal, "__file__", str(pkg / "__init__.py"))
    first = stages.code_fingerprint()
    assert first == stages.code_fingerprint() and len(first) == 16
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert stages.code_fingerprint() == first  # bytecode is not code
    (pkg / "safety" / "data" / "rules.yaml").write_text("id: b\n")  # a rule edit makes every cached stage stale
    assert stages.code_fingerprint() != first


def test_base_key_ignores_where_the_study_folder_is():
    from smallscale.stages import base_key

    opts = {"model": "/a/work/init", "data": "/a/work/data/sft.jsonl", "out": "/a/work/base", "lr": 3e-3, "seed": 0}
    moved = {**opts, "model": "/b/work/init", "data": "/b/work/data/sft.jsonl", "out": "/b/work/base"}
    assert base_key(opts, {"vocab_size": 8}, "k1") == base_key(moved, {"vocab_size": 8}, "k1")
    assert base_key(opts, {"vocab_size": 8}, "k1") != base_key({**opts, "lr": 1e-3}, {"vocab_size": 8}, "k1")
    assert base_key(opts, {"vocab_size": 8}, "k1") != base_key(opts, {"vocab_size": 8}, "k2")


# -- study v2 B: its config, the base data with unsafe plans, the grammar, the minimum detectable effect ----------
def test_study_b_config_loads_with_its_options():
    from smallscale.settings import CONFIGS, load_settings

    b = load_settings(CONFIGS / "study_b.yaml")
    assert b.seeds == [0, 1, 2, 3, 4] and b.eval.grammar == "actions" and b.eval.datasets == ["saferisks-test"]
    assert b.data.activity is False and b.data.unsafe_share == 0.5 and b.data.pair_sources == ["saferisks"]
    assert b.sweep.alphas == [] and b.align.methods["safe-align"]["normaliser"] == "weighted"
    smoke = load_settings(CONFIGS / "study_b_smoke.yaml")
    assert smoke.eval.grammar == "actions" and smoke.eval.limit == 6 and smoke.data.unsafe_share == 0.5
    full = load_settings(CONFIGS / "full.yaml")  # the v1 study keeps its data: programs too, no unsafe examples
    assert full.data.activity is True and full.data.unsafe_share == 0.0 and full.eval.grammar is None


def test_planner_spec_names_the_grammar_only_when_set():
    from smallscale.stages import planner_spec

    assert planner_spec("m", 48, 8) == "zero-shot:backend=hf:model=m,max_new_tokens=48,batch_size=8,device=cpu,template=compact"
    assert planner_spec("m", 48, 8, grammar="actions") == (
        "zero-shot:backend=hf:model=m,max_new_tokens=48,batch_size=8,device=cpu,grammar=actions,template=compact")


def test_base_data_adds_the_unsafe_plan_of_a_seeded_share_of_entries():
    from safebeal.datasets.saferisks import load_entries
    from smallscale.data import sft_examples

    rows = sft_examples(saferisks=True, saferisks_limit=40, activity=False, unsafe_share=0.5, seed=0)
    safe = [r for r in rows if r["source"] == "saferisks"]
    unsafe = [r for r in rows if r["source"] == "saferisks-unsafe"]
    assert len(safe) == 40 and 10 <= len(unsafe) <= 30 and not [r for r in rows if r["source"] == "activity"]
    entries = {e.id: e for e in load_entries()}
    by_task = {r["task_id"]: r for r in safe}
    for r in unsafe:  # the same prompt as the task's safe example, the entry's first unsafe plan as the target
        e = entries[r["task_id"]]
        assert e.split == "train" and r["prompt"] == by_task[r["task_id"]]["prompt"]
        assert r["chosen"] == "\n".join(e.unsafe_plans[0].plan) and r["chosen"] != by_task[r["task_id"]]["chosen"]
    again = sft_examples(saferisks=True, saferisks_limit=40, activity=False, unsafe_share=0.5, seed=0)
    assert [r["task_id"] for r in again if r["source"] == "saferisks-unsafe"] == [r["task_id"] for r in unsafe]
    assert not [r for r in sft_examples(saferisks=True, saferisks_limit=40, activity=False) if r["source"] != "saferisks"]


def test_minimum_detectable_effect_by_hand():
    from smallscale.report import ROW_ORDER, mde_seed_means, mde_table, mde_two_runs

    # p = 0.5, n = 800: 2.8016 * sqrt(2 * 0.25 / 800) = 2.8016 * 0.025 = 0.0700
    assert mde_two_runs(0.5, 800) == pytest.approx(0.07004, abs=1e-4)
    assert mde_two_runs(0.9, 100) == pytest.approx(2.801585 * math.sqrt(2 * 0.09 / 100), rel=1e-6)
    assert mde_two_runs(None, 10) is None and mde_two_runs(0.5, 0) is None
    # seed SD 0.02 over 5 seeds: 2.8016 * 0.02 * sqrt(2 / 5) = 0.0354
    assert mde_seed_means(0.02, 5) == pytest.approx(0.03544, abs=1e-4)

    def cell(mean, std, n):
        return {"n_tasks": 806, "safe_rate": {"mean": mean, "std": std, "n": n}}

    t1 = {ROW_ORDER[0]: {"saferisks-test": cell(0.6, 0.0, 1)}, "DPO": {"saferisks-test": cell(0.7, 0.03, 5)},
          "SimPO": {"saferisks-test": cell(0.72, 0.04, 5)}}
    mt = mde_table(t1, ["saferisks-test"], 5)["saferisks-test"]
    assert mt["n_tasks"] == 806 and mt["base_safe_rate"] == 0.6
    assert mt["mde_two_runs"] == pytest.approx(2.801585 * math.sqrt(2 * 0.24 / 806), rel=1e-6)
    assert mt["seed_sd"] == pytest.approx(math.sqrt((0.03 ** 2 + 0.04 ** 2) / 2))
    assert mt["mde_seed_means"] == pytest.approx(2.801585 * mt["seed_sd"] * math.sqrt(2 / 5), rel=1e-6)
