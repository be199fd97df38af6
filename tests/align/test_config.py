"""Training configs: defaults, YAML with line numbers, flag precedence, type and range errors (no torch)."""

from __future__ import annotations

import pytest

from safebeal.align.builtin.safe_align import SafeAlignConfig
from safebeal.align.config import (METHODS, ConfigError, all_fields, build_config, parse_sweep, training_method)

BASE = {"model": "org/name", "data": "d", "out": "o"}


def test_simpo_defaults_are_the_published_ones_and_safe_align_adds_alpha():
    cfg = build_config("safe-align", overrides=BASE)
    assert isinstance(cfg, SafeAlignConfig)
    # SimPO's published beta and gamma; the SFT anchor on (weight 1, SimPO publishes 0: docs/safe_align.md)
    assert (cfg.beta, cfg.gamma_beta_ratio, cfg.gamma, cfg.sft_weight) == (2.0, 0.25, 0.5, 1.0)
    assert build_config("simpo", overrides=BASE).sft_weight == 1.0
    assert (cfg.alpha, cfg.normaliser, cfg.lora, cfg.gradient_checkpointing) == (0.5, "weighted", True, None)
    assert build_config("dpo", overrides=BASE).beta == 0.1
    assert build_config("sft", overrides=BASE).lr == 2e-4 and cfg.lr == 5e-5


def test_every_field_has_help_text():
    for name, (f, methods) in all_fields().items():
        assert f.metadata.get("help"), name
    assert all_fields()["alpha"][1] == ["safe-align", "sft+safe-align"]
    assert all_fields()["beta"][1] == ["dpo", "safe-align", "sft+dpo", "sft+safe-align", "sft+simpo", "simpo"]
    assert all_fields()["sft_data"][1] == ["sft+dpo", "sft+safe-align", "sft+simpo"]
    assert METHODS.names() == ["dpo", "safe-align", "sft", "sft+dpo", "sft+safe-align", "sft+simpo", "simpo"]


def test_one_registered_method_carries_config_builder_columns_and_help():
    sa = training_method("safe-align")
    assert sa.config is SafeAlignConfig and sa.config.method == "safe-align"
    assert sa.columns == ("prompt", "chosen", "rejected", "prefix_actions")
    assert sa.build.__name__ == "build_safe_align" and sa.help.startswith("Safe-Align:")
    assert training_method("sft").columns == ("prompt", "chosen")
    chained = training_method("sft+dpo")  # derived from dpo's registration
    assert (chained.preference, chained.build, chained.columns) == ("dpo", None, ("prompt", "chosen", "rejected"))
    assert chained.config.method == "sft+dpo" and issubclass(chained.config, training_method("dpo").config)
    # a spec string makes a method's config (not validated: model, data and out are still empty)
    cfg = METHODS.create("safe-align:alpha=0.25,normaliser=length")
    assert isinstance(cfg, SafeAlignConfig) and (cfg.alpha, cfg.normaliser, cfg.beta) == (0.25, "length", 2.0)
    with pytest.raises(ConfigError, match="'alpha' is not an option of method dpo"):
        METHODS.create("dpo:alpha=0.5")


def test_yaml_then_flags(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("method: safe-align\nalpha: 0.2\nlora-r: 8\nno_such: 1\n")
    with pytest.raises(ConfigError, match=r"c\.yaml:4: unknown config key 'no_such' for method safe-align"):
        build_config(None, f, BASE)
    f.write_text("method: safe-align\nalpha: 0.2\nlora-r: 8\nnormaliser: weighted\n")
    cfg = build_config(None, f, {**BASE, "alpha": "0.7", "lora_r": None})
    assert (cfg.alpha, cfg.lora_r, cfg.normaliser) == (0.7, 8, "weighted")  # flag wins, None = flag not given
    # --method beats the file's method; the file's keys must then fit that method
    with pytest.raises(ConfigError, match="'alpha' is not an option of method simpo"):
        build_config("simpo", f, BASE)


def test_a_key_of_another_method_names_its_owner(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("beta: 0.2\nalpha: 0.5\n")
    with pytest.raises(ConfigError, match=r"c\.yaml:2: 'alpha' is not an option of method dpo \(it belongs to: safe-align, sft\+safe-align\)"):
        build_config("dpo", f, BASE)
    with pytest.raises(ConfigError, match=r"--alpha: 'alpha' is not an option of method sft"):
        build_config("sft", None, {**BASE, "alpha": 0.3})


@pytest.mark.parametrize("text, message", [
    ("alpha: high\n", r"c\.yaml:1: alpha must be float, got 'high'"),
    ("lora_r: 2.5\n", r"c\.yaml:1: lora_r must be int, got 2\.5"),
    ("lora: maybe\n", r"c\.yaml:1: lora must be bool"),
    ("alpha: 0.1\nalpha: 0.2\n", r"c\.yaml:2: 'alpha' is given twice"),
    ("alpha: [1, 2\n", r"c\.yaml:\d+: malformed YAML"),
    ("- alpha\n", r"must be a mapping"),
])
def test_yaml_errors_name_file_and_line(tmp_path, text, message):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=message):
        build_config("safe-align", f, BASE)


@pytest.mark.parametrize("over, message", [
    ({"alpha": 1.5}, r"alpha must be in \[0, 1\], got 1\.5"),
    ({"normaliser": "mean"}, r"normaliser must be one of length, weighted, got 'mean'"),
    ({"beta": 0}, r"beta must be > 0"),
    ({"batch_size": 0}, r"batch_size must be >= 1"),
    ({"max_steps": 0}, r"max_steps must be -1"),
    ({"model": ""}, r"--model is required"),
])
def test_range_errors(over, message):
    with pytest.raises(ConfigError, match=message):
        build_config("safe-align", None, {**BASE, **over})


def test_unknown_method_and_missing_method(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown method 'ppo'; choose one of dpo, safe-align, sft, sft\+dpo"):
        build_config("ppo", None, BASE)
    with pytest.raises(ConfigError, match="give --method"):
        build_config(None, None, BASE)
    with pytest.raises(ConfigError, match=r"nope\.yaml: config file not found"):
        build_config("dpo", tmp_path / "nope.yaml", BASE)


def test_parse_sweep():
    assert parse_sweep("alpha=0,0.2,1", "safe-align") == ("alpha", [0.0, 0.2, 1.0])
    assert parse_sweep("normaliser=length,weighted", "safe-align") == ("normaliser", ["length", "weighted"])
    with pytest.raises(ConfigError, match="'alpha' is not an option of method simpo"):
        parse_sweep("alpha=0,1", "simpo")
    with pytest.raises(ConfigError, match="must look like"):
        parse_sweep("alpha", "safe-align")
    with pytest.raises(ConfigError, match="repeated values"):
        parse_sweep("alpha=0.5,0.50", "safe-align")


def test_group_by_length_reaches_the_training_arguments_only_when_asked():
    from safebeal.align.methods import Runtime, trainer_kwargs

    rt = Runtime(use_cpu=True, bf16=False, gradient_checkpointing=False, dtype="float32")
    assert "train_sampling_strategy" not in trainer_kwargs(build_config("sft", overrides=BASE), rt)
    grouped = build_config("sft", overrides={**BASE, "group_by_length": True})
    assert trainer_kwargs(grouped, rt)["train_sampling_strategy"] == "group_by_length"


def test_transformers_older_than_the_trainers_need_is_refused():
    from safebeal.align.preflight import VersionError, check_transformers

    for ok in ("5.19.0", "5.23.0", "5.100.1"):
        check_transformers(ok)
    for bad in ("4.46.3", "4.57.6", "5.18.0", "6.0.0"):
        with pytest.raises(VersionError, match=r">=5.19,<6"):
            check_transformers(bad)


def test_gradient_checkpointing_is_on_with_a_gpu_by_default_and_never_on_cpu(monkeypatch):
    torch = pytest.importorskip("torch")
    from safebeal.align.methods import Runtime

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert Runtime.resolve(build_config("safe-align", overrides=BASE)).gradient_checkpointing is True
    off = build_config("safe-align", overrides={**BASE, "gradient_checkpointing": False})
    assert Runtime.resolve(off).gradient_checkpointing is False
    cpu = build_config("safe-align", overrides={**BASE, "device": "cpu", "gradient_checkpointing": True})
    assert Runtime.resolve(cpu).gradient_checkpointing is False
