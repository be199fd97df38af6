"""A new preference loss and the training method that trains it, in one module: ``sigmoid-margin``.

For a pair (x, y_w, y_l), with log p(y) the summed log-probability of a plan's tokens (no reference model, no
length normalisation)::

    r(y) = beta * log p(y)
    loss = -log sigmoid( r(y_w) - r(y_l) - margin )

Importing this module registers the loss in ``safebeal.align.losses.LOSSES`` and a method of the same name in
``safebeal.align.config.METHODS`` (its config class gives the ``--beta`` and ``--margin`` flags, its columns the
pair fields it needs). The chained recipe ``sft+sigmoid-margin`` comes with it. Then, with this file importable::

    python -c "import my_loss; from safebeal.cli import app; app()" train --method sigmoid-margin \\
        --model org/name --data pairs/ --out runs/sm --margin 1.0

Nothing else changes: the trainer (``PairLossTrainer``), the data check, ``safebeal train --help`` and the YAML
config all read the registration. Tested in ``tests/align/test_extending_loss.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Sequence

import torch
import torch.nn.functional as F

from safebeal.align.config import ConfigError, TrainConfig, option, register_method
from safebeal.align.losses import LOSSES, sequence_rewards
from safebeal.align.methods import pair_loss_trainer


@LOSSES.register("sigmoid-margin")
@dataclass
class SigmoidMarginLoss:
    """-log sigmoid(beta * (log p(y_w) - log p(y_l)) - margin), on summed token log-probs."""

    beta: float = 0.1
    margin: float = 1.0

    def __call__(self, logps: torch.Tensor, completion_mask: torch.Tensor, prefix_mask: torch.Tensor,
                 n_pairs: int) -> Dict[str, torch.Tensor]:
        # rows: the n_pairs chosen plans, then the n_pairs rejected ones; sums and counts per row
        seq = sequence_rewards(logps, completion_mask, prefix_mask, alpha=1.0, beta=1.0)
        reward = self.beta * (seq["sum_prefix"] + seq["sum_rest"])
        chosen, rejected = reward[:n_pairs], reward[n_pairs:]
        losses = -F.logsigmoid(chosen - rejected - self.margin)
        return {"loss": losses.mean(), "losses": losses, "reward_chosen": chosen, "reward_rejected": rejected,
                "nll": torch.zeros((), device=logps.device),  # no SFT term
                "avg_logp_chosen": seq["avg_logp"][:n_pairs], "avg_logp_rejected": seq["avg_logp"][n_pairs:],
                "prefix_fraction": seq["n_prefix"] / seq["n_tokens"].clamp(min=1.0)}


@dataclass
class SigmoidMarginConfig(TrainConfig):
    """Sigmoid-margin preference training: every shared option of ``TrainConfig`` plus the loss's own."""

    beta: float = option(0.1, "Reward scale beta.")
    margin: float = option(1.0, "Target margin between the chosen and the rejected plan's rewards (sigmoid-margin).")

    def validate(self) -> None:
        super().validate()
        if self.beta <= 0:
            raise ConfigError(f"beta must be > 0, got {self.beta}")


def build(cfg: SigmoidMarginConfig, pairs: Sequence[Any], model: Any, tokenizer: Any, runtime: Any,
          callbacks: list) -> Any:
    """The trainer: safebeal's pair-loss trainer (one forward pass over chosen and rejected rows) with this loss."""
    loss = LOSSES.create("sigmoid-margin", beta=cfg.beta, margin=cfg.margin)
    return pair_loss_trainer(cfg, pairs, model, tokenizer, runtime, callbacks, loss)


register_method("sigmoid-margin", SigmoidMarginConfig, build, columns=("prompt", "chosen", "rejected"),
                help="Sigmoid-margin: -log sigmoid(beta * (log p(y_w) - log p(y_l)) - margin), no reference model.")
