"""The chained recipe ``safebeal train --method sft+<preference method>``: SFT into ``<out>/sft``, then the
preference method from the SFT model into ``<out>``, both stages recorded in ``<out>/recipe.json``. End to end
on CPU with the tiny random Llama of ``conftest.py``; the weight checks prove the preference stage started from
the SFT weights (merged) or the SFT adapter (``--no-sft-merge``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from safebeal.align.config import ConfigError, build_config, stage_configs

from align_helpers import launch_zero3

FIXTURES = Path(__file__).parents[1] / "datasets" / "fixtures" / "worldmodel"
BASE = {"model": "org/name", "data": "pairs/", "out": "runs/r"}
Q = "model.layers.0.self_attn.q_proj"


def test_stage_configs_share_the_runtime_and_split_the_rest():
    cfg = build_config("sft+safe-align", overrides={**BASE, "alpha": 0.2, "lr": 1e-4, "sft_lr": 3e-4, "lora_r": 8,
                                                    "sft_max_steps": 7, "max_steps": 5, "batch_size": 2,
                                                    "sft_data": "dataset:activity-train,worldmodel:/wm"})
    sft, pref = stage_configs(cfg, "runs/r/sft")
    assert (sft.method, sft.model, sft.data, sft.out) == ("sft", "org/name", "dataset:activity-train,worldmodel:/wm",
                                                           "runs/r/sft")
    assert (sft.lr, sft.max_steps, sft.lora_r, sft.batch_size, sft.merge) == (3e-4, 7, 8, 2, True)
    assert (pref.method, pref.model, pref.data, pref.out) == ("safe-align", "runs/r/sft", "pairs/", "runs/r")
    assert (pref.lr, pref.max_steps, pref.lora_r, pref.alpha, pref.normaliser) == (1e-4, 5, 8, 0.2, "weighted")
    # keeping the adapter: the preference stage loads the base (and the adapter on top of it)
    sft, pref = stage_configs(build_config("sft+simpo", overrides={**BASE, "sft_merge": False}), "runs/r/sft")
    assert (sft.merge, pref.model, pref.method) == (False, "org/name", "simpo")
    assert build_config("sft+dpo", overrides=BASE).sft_data == "dataset:activity-train"


@pytest.mark.parametrize("over, message", [
    ({"sft_merge": False}, "sft\\+dpo needs the merged SFT model as its reference"),
    ({"sft_lr": 0}, "sft_lr must be > 0"),
    ({"sft_max_steps": 0}, "sft_max_steps must be -1"),
    ({"sft_data": " "}, "--sft-data is required"),
    ({"beta": 0}, "beta must be > 0"),
])
def test_chained_config_errors(over, message):
    with pytest.raises(ConfigError, match=message):
        build_config("sft+dpo", overrides={**BASE, **over})
    with pytest.raises(ConfigError, match="'sft_lr' is not an option of method safe-align"):
        build_config("safe-align", overrides={**BASE, "sft_lr": 1e-3})


def test_sft_sources_read_plans_as_planners_write_them():
    from safebeal.align.recipe import load_sft_examples

    ex = load_sft_examples(f"dataset:activity-train, worldmodel:{FIXTURES}", limit=2)
    assert [(e.task_id, e.source) for e in ex] == [("3_1", "dataset:activity-train"), ("6_1", "dataset:activity-train"),
                                                   ("plan_gen_more:1", "worldmodel"), ("plan_gen_small:1", "worldmodel")]
    # ActivityPrograms' "(1.319)" ids are written as the planners write them
    assert ex[0].chosen.split("\n")[:2] == ["[WALK] <home_office> (319)", "[WALK] <couch> (352)"]
    assert ex[0].prompt[-1]["role"] == "user" and ex[0].prompt[-1]["content"].startswith("Task: Relax on sofa\n")
    assert len(load_sft_examples("dataset:activity-train")) == 424


def test_a_pair_dataset_source_gives_its_chosen_plans(toy_data, toy_rows, tmp_path):
    from safebeal.align.data import PairDataError
    from safebeal.align.recipe import load_sft_examples

    ex = load_sft_examples(f"{toy_data},worldmodel:{FIXTURES}", limit=3)
    assert [e.chosen for e in ex[:3]] == [r["chosen"] for r in toy_rows[:3]] and len(ex) == 6
    with pytest.raises(PairDataError, match="pair dataset not found"):
        load_sft_examples(str(tmp_path / "nope.jsonl"))
    with pytest.raises(PairDataError, match="names no source"):
        load_sft_examples(" , ")


@pytest.mark.train
def test_bad_sft_source_fails_before_any_model(tiny_model, toy_data, tmp_path):
    from typer.testing import CliRunner

    from safebeal.cli import app

    res = CliRunner().invoke(app, ["train", "--method", "sft+safe-align", "--model", str(tiny_model), "--data",
                                   str(toy_data), "--out", str(tmp_path / "r"), "--sft-data", "dataset:no-such-set"])
    assert res.exit_code == 2 and "sft data dataset:no-such-set" in " ".join(res.output.split())
    assert not (tmp_path / "r").exists()
    res = CliRunner().invoke(app, ["train", "--method", "sft+safe-align", "--model", str(tiny_model), "--data",
                                   str(toy_data), "--out", str(tmp_path / "r"), "--sweep", "alpha=0,1"])
    assert res.exit_code == 2 and "--sweep trains one method" in " ".join(res.output.split())


def _run(tiny_model, toy_data, out, *extra):
    from typer.testing import CliRunner

    from safebeal.cli import app

    args = ["train", "--model", str(tiny_model), "--data", str(toy_data), "--out", str(out),
            "--sft-data", f"dataset:activity-train,worldmodel:{FIXTURES}", "--sft-limit", "2", "--sft-max-steps", "2",
            "--sft-lr", "1e-2", "--max-steps", "2", "--batch-size", "2", "--max-length", "2048", "--no-progress",
            *map(str, extra)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res


def _steps(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if '"loss"' in line]


def _lora_delta(adapter: Path, module: str, scale: float):
    from safetensors.torch import load_file

    w = load_file(str(adapter / "adapter_model.safetensors"))
    a, b = w[f"base_model.model.{module}.lora_A.weight"], w[f"base_model.model.{module}.lora_B.weight"]
    return (b @ a) * scale, b


@pytest.mark.train
def test_sft_then_safe_align_starts_from_the_merged_sft_model(tiny_model, toy_data, tmp_path):
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    import torch
    from safetensors.torch import load_file

    out = tmp_path / "recipe"
    res = _run(tiny_model, toy_data, out, "--method", "sft+safe-align", "--lr", "1e-2", "--alpha", "0.5")
    assert "sft: 2 steps on 4 examples" in res.output and "safe-align: 2 steps on 4 examples" in res.output
    rec = json.loads((out / "recipe.json").read_text())
    assert rec["method"] == "sft+safe-align" and [s["name"] for s in rec["stages"]] == ["sft", "safe-align"]
    sft_cfg, pref_cfg = rec["stages"][0]["config"], rec["stages"][1]["config"]
    assert (sft_cfg["method"], sft_cfg["lr"], sft_cfg["out"]) == ("sft", 1e-2, str(out / "sft"))
    assert (pref_cfg["method"], pref_cfg["model"], pref_cfg["alpha"]) == ("safe-align", str(out / "sft"), 0.5)
    assert rec["stages"][0]["n_examples"] == 4 and rec["stages"][1]["n_pairs"] == 4
    assert [s["result"]["steps"] for s in rec["stages"]] == [2, 2]
    # both stages' logs and configs, each in its own directory
    assert [(r["step"], r["method"]) for r in _steps(out / "sft" / "train_log.jsonl")] == [(1, "sft"), (2, "sft")]
    assert [(r["step"], r["method"]) for r in _steps(out / "train_log.jsonl")] == [(1, "safe-align"), (2, "safe-align")]
    assert json.loads((out / "train_config.json").read_text())["model"] == str(out / "sft")
    # the weights: SFT moved q_proj; the final model is the SFT model plus the preference adapter, not the base plus it
    base = load_file(str(tiny_model / "model.safetensors"))[f"{Q}.weight"]
    sft = load_file(str(out / "sft" / "model.safetensors"))[f"{Q}.weight"]
    final = load_file(str(out / "model.safetensors"))[f"{Q}.weight"]
    assert (sft - base).abs().max() > 1e-4
    delta, _ = _lora_delta(out / "adapter", Q, 32 / 16)
    assert delta.abs().max() > 1e-5
    assert torch.allclose(final, sft + delta, atol=1e-6)
    assert not torch.allclose(final, base + delta, atol=1e-5)


@pytest.mark.train
def test_no_sft_merge_goes_on_training_the_sft_adapter(tiny_model, toy_data, tmp_path):
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    import torch
    from safetensors.torch import load_file

    out = tmp_path / "recipe"
    # a preference learning rate so small that the adapter cannot move measurably: what it ends with is what it began with
    _run(tiny_model, toy_data, out, "--method", "sft+simpo", "--no-sft-merge", "--lr", "1e-9")
    assert not (out / "sft" / "config.json").exists() and (out / "sft" / "adapter" / "adapter_config.json").exists()
    rec = json.loads((out / "recipe.json").read_text())
    assert rec["stages"][1]["starts_from"] == "base + sft adapter"
    assert rec["stages"][1]["config"]["model"] == str(tiny_model)
    sft_delta, sft_b = _lora_delta(out / "sft" / "adapter", Q, 2.0)
    pref_delta, pref_b = _lora_delta(out / "adapter", Q, 2.0)
    assert sft_b.abs().max() > 1e-4  # a fresh LoRA starts with lora_B = 0; the SFT stage moved it
    assert torch.allclose(pref_b, sft_b, atol=1e-6)
    base = load_file(str(tiny_model / "model.safetensors"))[f"{Q}.weight"]
    final = load_file(str(out / "model.safetensors"))[f"{Q}.weight"]
    assert torch.allclose(final, base + pref_delta, atol=1e-6)




@pytest.mark.slow
def test_recipe_under_zero3_on_two_cpu_ranks(tiny_model, toy_data, tmp_path):
    """The GPU recipe's shape on 2 CPU ranks: accelerate + DeepSpeed ZeRO-3, LoRA, SFT merged between the stages
    (in its own process) and loaded by every rank for the preference stage. The final model is the SFT model plus
    the preference adapter, merged in a plain process."""
    out = tmp_path / "z3"
    res = launch_zero3(tmp_path, ["--method", "sft+safe-align", "--model", str(tiny_model), "--data", str(toy_data),
                                  "--out", str(out), "--sft-data", f"worldmodel:{FIXTURES}", "--sft-max-steps", "1",
                                  "--max-steps", "1", "--batch-size", "2", "--no-progress", "--device", "cpu",
                                  "--sft-lr", "1e-2", "--lr", "1e-2"], timeout=540)
    import torch
    from transformers import AutoModelForCausalLM

    from safebeal.align.merge import merge_adapter

    assert res.returncode == 0, res.stderr[-3000:]
    rec = json.loads((out / "recipe.json").read_text())
    assert [s["result"]["steps"] for s in rec["stages"]] == [1, 1]
    merge_adapter(str(out / "sft"), out / "adapter", tmp_path / "ref")
    merged, ref = AutoModelForCausalLM.from_pretrained(out), AutoModelForCausalLM.from_pretrained(tmp_path / "ref")
    for (name, a), (_, b) in zip(merged.state_dict().items(), ref.state_dict().items()):
        assert torch.equal(a, b), name
    sft = AutoModelForCausalLM.from_pretrained(out / "sft").state_dict()
    base = AutoModelForCausalLM.from_pretrained(tiny_model).state_dict()
    assert any(not torch.equal(sft[k], base[k]) for k in base)
    assert any(not torch.equal(merged.state_dict()[k], sft[k]) for k in sft)
