"""``safebeal train`` end to end on the tiny model for every method; the result loads as a benchmark backend;
bad input fails with a one-line error before any training."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

from typer.testing import CliRunner  # noqa: E402

from safebeal.cli import app  # noqa: E402

from align_helpers import launch_zero3

pytestmark = pytest.mark.train
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["train", *map(str, args)])


def common(tiny_model, data, out):
    return ["--model", tiny_model, "--data", data, "--out", out, "--max-steps", 2, "--batch-size", 2, "--no-progress"]


@pytest.mark.parametrize("method", ["sft", "dpo", "simpo", "safe-align"])
def test_every_method_trains_and_loads_as_a_benchmark_backend(method, tiny_model, toy_data, toy_rows, tmp_path):
    import torch
    from safetensors.torch import load_file

    from safebeal.planners.backends import BACKENDS

    out = tmp_path / method
    res = invoke("--method", method, *common(tiny_model, toy_data, out), "--lr", 1e-3)
    assert res.exit_code == 0, res.output
    assert f"{method}: 2 steps" in res.output
    log = [json.loads(l) for l in (out / "train_log.jsonl").read_text().splitlines()]
    steps = [r for r in log if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2] and all(r["method"] == method for r in steps)
    assert all(isinstance(r["loss"], float) and r["loss"] > 0 for r in steps)
    if method != "sft":
        assert all(0.0 <= r["pair_accuracy"] <= 1.0 and isinstance(r["reward_margin"], float) for r in steps)
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    assert json.loads((out / "train_config.json").read_text())["method"] == method
    # LoRA (the default) was merged into plain weights; the adapter is kept beside them
    assert (out / "adapter" / "adapter_config.json").exists()
    base, trained = load_file(str(tiny_model / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert set(base) == set(trained)  # no lora_A/lora_B keys left
    key = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(base[key], trained[key])  # training changed it and the merge carried it over
    backend = BACKENDS.create(f"hf:model={out},max_new_tokens=4,device=cpu")
    gen = backend.generate([toy_rows[0]["prompt"]])[0]
    assert gen.ok and isinstance(gen.text, str) and gen.usage["completion_tokens"] >= 1


def test_full_fine_tuning_saves_the_model_itself(tiny_model, toy_data, tmp_path):
    out = tmp_path / "full"
    res = invoke("--method", "safe-align", *common(tiny_model, toy_data, out), "--no-lora", "--max-steps", 1)
    assert res.exit_code == 0, res.output
    assert (out / "model.safetensors").exists() and not (out / "adapter").exists()


def test_yaml_config_through_the_standalone_program(tiny_model, toy_data, tmp_path):
    """``python -m safebeal.train`` runs ``standalone_app()``: the same command, YAML + flags."""
    import subprocess
    import sys

    from safebeal.align.commands import standalone_app

    cfg = tmp_path / "sa.yaml"
    cfg.write_text(f"method: safe-align\nmodel: {tiny_model}\ndata: {toy_data}\nalpha: 0.25\nmax_steps: 1\n"
                   "progress: false\nlora_r: 4\n")
    out = tmp_path / "yaml"
    res = runner.invoke(standalone_app(), ["--config", str(cfg), "--out", str(out), "--normaliser", "weighted"])
    assert res.exit_code == 0, res.output
    saved = json.loads((out / "train_config.json").read_text())
    assert (saved["alpha"], saved["normaliser"], saved["lora_r"], saved["max_steps"]) == (0.25, "weighted", 4, 1)
    helped = subprocess.run([sys.executable, "-m", "safebeal.train", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--gamma-beta-ratio" in helped.stdout


@pytest.mark.parametrize("args, message", [
    (["--method", "ppo"], "unknown method 'ppo'"),
    (["--method", "dpo", "--alpha", "0.3"], "'alpha' is not an option of method dpo"),
    (["--method", "safe-align", "--model", "./no/such/model"], "--model path './no/such/model' does not exist"),
    (["--method", "safe-align", "--data", "BADK"], "prefix_actions=9 exceeds the chosen plan (4 actions)"),
    (["--method", "safe-align", "--data", "NOCOL"], "missing column(s) prefix_actions needed by safe-align"),
    (["--method", "dpo", "--data", "NOCOL2"], "missing column(s) rejected needed by dpo"),
    (["--config", "BADCFG"], "c.yaml:2: unknown config key 'learning_rate'"),
])
def test_bad_input_fails_before_training(tiny_model, toy_data, toy_rows, tmp_path, args, message):
    rows = toy_rows
    paths = {"BADK": [{**rows[0], "prefix_actions": 9}], "NOCOL": [{k: v for k, v in rows[0].items() if k != "prefix_actions"}],
             "NOCOL2": [{k: v for k, v in rows[0].items() if k != "rejected"}]}
    for name, data in paths.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    (tmp_path / "c.yaml").write_text("method: safe-align\nlearning_rate: 0.1\n")
    subst = {"BADK": tmp_path / "BADK.jsonl", "NOCOL": tmp_path / "NOCOL.jsonl", "NOCOL2": tmp_path / "NOCOL2.jsonl",
             "BADCFG": tmp_path / "c.yaml"}
    args = [str(subst.get(a, a)) for a in args]
    base = {"--model": str(tiny_model), "--data": str(toy_data), "--out": str(tmp_path / "out")}
    for flag, value in base.items():
        if flag not in args:
            args += [flag, value]
    res = invoke(*args)
    assert res.exit_code == 2
    assert message in " ".join(res.output.split()), res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "train_log.jsonl").exists()


def test_existing_output_needs_overwrite(tiny_model, toy_data, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "config.json").write_text("{}")
    res = invoke("--method", "sft", *common(tiny_model, toy_data, out))
    assert res.exit_code == 2 and "pass --overwrite" in res.output


def test_alpha_sweep_writes_json_and_plot(tiny_model, toy_data, tmp_path):
    out = tmp_path / "sweep"
    res = invoke("--method", "safe-align", *common(tiny_model, toy_data, out), "--max-steps", 1,
                 "--sweep", "alpha=0,1", "--eval-dataset", "none")
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["param"] == "alpha" and [r["alpha"] for r in doc["runs"]] == [0.0, 1.0]
    for r in doc["runs"]:
        cfg = json.loads((out / f"alpha_{r['alpha']}" / "train_config.json").read_text())
        assert cfg["alpha"] == r["alpha"] and r["train"]["steps"] == 1 and "eval" not in r
    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    bad = invoke("--method", "safe-align", *common(tiny_model, toy_data, tmp_path / "s2"), "--sweep", "alpha=0,2")
    assert bad.exit_code == 2 and "alpha must be in [0, 1], got 2.0" in " ".join(bad.output.split())
    assert not (tmp_path / "s2" / "alpha_0.0" / "train_log.jsonl").exists()  # checked before the first run


def test_sweep_evaluates_each_model_with_the_benchmark(tiny_model, toy_data, tmp_path):
    pytest.importorskip("safebeal.bench.metrics")
    from safebeal.align.config import build_config
    from safebeal.align.sweep import EvalSettings, run_sweep

    cfg = build_config("safe-align", overrides={"model": str(tiny_model), "data": str(toy_data),
                                                "out": str(tmp_path / "sw"), "max_steps": 1, "progress": False})
    doc = run_sweep(cfg, "alpha", [0.5], EvalSettings("activity-test", limit=1, max_new_tokens=4))
    ev = doc["runs"][0]["eval"]
    # the short label (planner/model); the full spec, with the model's path, is in the run's config.json
    assert ev["n"] == 1 and ev["planner"] == "zero-shot/alpha_0.5:max_new_tokens=4"
    config = json.loads((tmp_path / "sw" / "alpha_0.5" / "bench" / "config.json").read_text())
    assert config["planner_specs"][ev["planner"]].startswith("zero-shot:backend=hf:model=")
    assert 0.0 <= ev["safe_rate"] <= 1.0 and 0.0 <= ev["success_rate"] <= 1.0
    summary = json.loads((tmp_path / "sw" / "alpha_0.5" / "bench" / "summary.json").read_text())
    assert list(summary) == [ev["planner"]]


def test_accelerate_configs_load():
    from pathlib import Path

    config_args = pytest.importorskip("accelerate.commands.config.config_args")
    root = Path(__file__).resolve().parents[2] / "configs" / "accelerate"
    kinds = {}
    for name in ("ddp", "zero2", "zero3"):
        c = config_args.ClusterConfig.from_yaml_file(str(root / f"{name}.yaml"))
        kinds[name] = (c.distributed_type.value, c.deepspeed_config.get("zero_stage"))
    assert kinds == {"ddp": ("MULTI_GPU", None), "zero2": ("DEEPSPEED", 2), "zero3": ("DEEPSPEED", 3)}


@pytest.mark.slow
def test_two_ranks_log_metrics_over_all_pairs(tiny_model, toy_data, tmp_path):
    """torchrun with 2 CPU ranks x 2 pairs: step 1's logged reward margin and loss are the means over all 4 pairs
    (gathered), equal to a single-process evaluation of the initial model on the whole set."""
    import os
    import shutil
    import subprocess

    from safebeal.align.config import build_config
    from safebeal.align.data import load_pairs
    from safebeal.align.methods import build_trainer

    torchrun = shutil.which("torchrun")
    if torchrun is None:
        pytest.skip("torchrun not installed")
    out = tmp_path / "ddp"
    cmd = [torchrun, "--standalone", "--nproc_per_node", "2", "-m", "safebeal.train", "--method", "safe-align",
           "--model", str(tiny_model),
           "--data", str(toy_data), "--out", str(out), "--max-steps", "1", "--batch-size", "2", "--no-lora",
           "--no-progress", "--device", "cpu", "--sft-weight", "0"]  # score() is the preference loss alone
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    res = subprocess.run(cmd + ["--overwrite"], capture_output=True, text=True, env=env, timeout=300)
    if res.returncode != 0 and "terminate called without an active exception" in res.stderr:
        # a known flake on two loaded cores: rank 1 aborts at exit, after training and saving; tried once more
        res = subprocess.run(cmd + ["--overwrite"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    step1 = json.loads((out / "train_log.jsonl").read_text().splitlines()[0])
    assert step1["epoch"] == 1.0  # both ranks' batches make one pass over the 4 pairs
    cfg = build_config("safe-align", overrides={"model": str(tiny_model), "data": str(toy_data), "out": str(tmp_path / "x"),
                                                "lora": False, "progress": False, "sft_weight": 0.0})
    whole = build_trainer(cfg, load_pairs(toy_data, "safe-align")).score()
    assert step1["reward_margin"] == pytest.approx(whole["margin"], abs=1e-5)
    assert step1["pair_accuracy"] == pytest.approx(whole["accuracy"])
    assert step1["loss"] == pytest.approx(whole["loss"], abs=1e-5)


@pytest.mark.parametrize("method", ["safe-align", "dpo", "simpo", "sft"])
def test_group_by_length_trains_every_method(method, tiny_model, toy_data, tmp_path):
    """It crashed before the first step for every preference method: their datasets have no input_ids."""
    res = invoke("--method", method, *common(tiny_model, toy_data, tmp_path / method), "--group-by-length",
                 "--max-steps", 1)
    assert res.exit_code == 0, res.output


def test_example_lengths_of_each_dataset_form():
    from datasets import Dataset

    from safebeal.align.sampling import example_lengths

    cpo = Dataset.from_list([{"prompt_input_ids": [1, 2], "chosen_input_ids": [3], "rejected_input_ids": [4, 5, 6]}])
    dpo = Dataset.from_list([{"prompt_ids": [1], "chosen_ids": [3, 3], "rejected_ids": [4]}])
    assert example_lengths(cpo) == [5] and example_lengths(dpo) == [3]
    assert example_lengths(Dataset.from_list([{"input_ids": [1, 2, 3, 4]}])) == [4]
    with pytest.raises(ValueError, match="columns"):
        example_lengths(Dataset.from_list([{"text": "x"}]))




@pytest.mark.slow
def test_zero3_lora_run_merges_without_deadlock(tiny_model, toy_data, tmp_path):
    """accelerate + DeepSpeed ZeRO-3 on 2 CPU ranks, LoRA, merge on: the merged model is saved and equals the
    adapter merged into the base in a plain process. Loading the base inside the job (rank 0 under zero.Init)
    hung here before the merge moved to its own process."""
    out = tmp_path / "z3"
    res = launch_zero3(tmp_path, ["--method", "safe-align", "--model", str(tiny_model), "--data", str(toy_data),
                                  "--out", str(out), "--max-steps", "1", "--batch-size", "2", "--no-progress",
                                  "--device", "cpu"], timeout=420)
    import torch
    from transformers import AutoModelForCausalLM

    from safebeal.align.merge import merge_adapter

    assert res.returncode == 0, res.stderr[-3000:]
    merged = AutoModelForCausalLM.from_pretrained(out)
    merge_adapter(str(tiny_model), out / "adapter", tmp_path / "ref")
    ref = AutoModelForCausalLM.from_pretrained(tmp_path / "ref")
    for (name, a), (_, b) in zip(merged.state_dict().items(), ref.state_dict().items()):
        assert torch.equal(a, b), name
    base = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert any(not torch.equal(a, b) for a, b in zip(merged.state_dict().values(), base.state_dict().values()))


def test_pairs_whose_prompt_fills_max_length_are_dropped_for_dpo_and_simpo(tiny_model, toy_data, toy_rows, tmp_path):
    """One such pair turned TRL's SimPO loss into NaN for its whole batch (logged as 0 with null log-probs)."""
    import math

    from transformers import AutoTokenizer

    from safebeal.align.data import load_pairs
    from safebeal.align.methods import preference_rows, rendered_prompt

    tok = AutoTokenizer.from_pretrained(tiny_model)
    pairs = load_pairs(toy_data, "simpo")
    lengths = sorted(len(tok(rendered_prompt(tok, p.prompt), add_special_tokens=False)["input_ids"]) for p in pairs)
    limit = lengths[1] + 1  # room for the two shortest prompts (+ one token), not for the longer ones
    rows, dropped = preference_rows(tok, pairs, limit + 1)
    assert (len(rows), dropped) == (2, len(pairs) - 2)
    res = invoke("--method", "simpo", *common(tiny_model, toy_data, tmp_path / "s"), "--max-length", limit + 40,
                 "--sft-weight", 0)
    assert res.exit_code == 0, res.output
    logged = [json.loads(x) for x in (tmp_path / "s" / "train_log.jsonl").read_text().splitlines() if '"loss"' in x]
    assert logged and all(r["logps/chosen"] is not None and math.isfinite(r["loss"]) and r["loss"] > 0
                          for r in logged if "logps/chosen" in r)
