"""docs/examples/extending/my_loss.py: a new preference loss in one module is registered, listed by
``safebeal train --help``, computes its formula, and trains a tiny random model on CPU."""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "extending"

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def my_loss():
    """The example, imported once under its own name (importing it again would register it again)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module("my_loss")
    finally:
        sys.path.remove(str(EXAMPLES))


def test_the_example_registers_its_method_loss_and_chained_recipe(my_loss):
    from safebeal.align.config import METHODS, training_method
    from safebeal.align.losses import LOSSES

    assert "sigmoid-margin" in LOSSES.names() and "sigmoid-margin" in METHODS.names()
    m = training_method("sigmoid-margin")
    assert m.config is my_loss.SigmoidMarginConfig and m.columns == ("prompt", "chosen", "rejected")
    assert training_method("sft+sigmoid-margin").preference == "sigmoid-margin"
    assert isinstance(LOSSES.create("sigmoid-margin:beta=0.5"), my_loss.SigmoidMarginLoss)


def test_train_help_lists_the_method_and_its_flag(my_loss):
    import typer
    from typer.testing import CliRunner

    from safebeal.align import commands

    app = typer.Typer()  # the command as safebeal.cli registers it, built after the example's import
    commands.register(app)

    @app.command("other")  # two commands, so "train" is a subcommand as in `safebeal train`
    def other() -> None:  # pragma: no cover
        pass

    res = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert res.exit_code == 0, res.output
    assert "- sigmoid-margin: Sigmoid-margin: -log sigmoid(beta * (log p(y_w) - log p(y_l)) - margin)" in res.output
    assert "--margin" in res.output and "sft+sigmoid-margin" in res.output


def test_the_loss_is_its_formula_on_a_hand_checked_case(my_loss):
    # one pair: chosen tokens log p = -1, -2 (then padding); rejected -0.5, -3, -1; the first token is shared
    logps = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, -3.0, -1.0]])
    completion = torch.tensor([[True, True, False], [True, True, True]])
    prefix = torch.tensor([[True, False, False], [True, False, False]])
    out = my_loss.SigmoidMarginLoss(beta=0.5, margin=0.25)(logps, completion, prefix, n_pairs=1)
    # r_w = 0.5 * -3 = -1.5, r_l = 0.5 * -4.5 = -2.25; -log sigmoid(0.75 - 0.25) = log(1 + e^-0.5) = 0.474077
    assert out["reward_chosen"].tolist() == [-1.5] and out["reward_rejected"].tolist() == [-2.25]
    assert out["loss"].item() == pytest.approx(0.4740770, abs=1e-6)
    assert out["loss"].item() == pytest.approx(math.log(1 + math.exp(-0.5)), abs=1e-6)


def test_it_trains_a_tiny_model_for_two_steps(my_loss, tiny_model, toy_data, tmp_path):
    from safebeal.align.config import build_config
    from safebeal.align.data import load_pairs
    from safebeal.align.methods import build_trainer, train

    over = {"model": str(tiny_model), "data": str(toy_data), "progress": False, "lora": False,
            "beta": 0.2, "margin": 0.5}
    # the trainer computes the formula: forward each plan alone (no padding) and sum its token log-probs by hand
    tr = build_trainer(build_config("sigmoid-margin", overrides={**over, "out": str(tmp_path / "a")}),
                       load_pairs(toy_data, "sigmoid-margin"))
    items = [tr.train_dataset[i] for i in range(len(tr.train_dataset))]
    with torch.no_grad():
        out = tr.batch_loss(tr.model, tr.data_collator(items))
        logp = {"chosen": [], "rejected": []}
        for item in items:
            for side in logp:
                e = item[side]
                lp = torch.log_softmax(tr.model(torch.tensor([e.input_ids])).logits[0, :-1].double(), -1)
                logp[side].append(sum(lp[len(e.prompt_ids) - 1 + j, t].item() for j, t in enumerate(e.completion_ids)))
    expected = sum(-math.log(1 / (1 + math.exp(-(0.2 * (w - l) - 0.5)))) for w, l in zip(logp["chosen"], logp["rejected"]))
    assert out["loss"].item() == pytest.approx(expected / len(items), abs=1e-4)

    cfg = build_config("sigmoid-margin", overrides={**over, "out": str(tmp_path / "run"), "max_steps": 2,
                                                   "batch_size": 2, "lr": 1e-3})
    result = train(cfg)
    assert result.method == "sigmoid-margin" and result.steps == 2 and result.n_pairs == 4
    logged = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in logged if "loss" in r]
    assert len(losses) == 2 and all(math.isfinite(x) and x > 0 for x in losses)
    assert json.loads((tmp_path / "run" / "train_config.json").read_text())["method"] == "sigmoid-margin"
    assert (tmp_path / "run" / "config.json").exists()  # the trained model, loadable as hf:model=<out>
