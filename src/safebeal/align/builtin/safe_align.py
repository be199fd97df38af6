"""``safe-align``: SimPO whose reward down-weights the tokens of the k actions both plans share, trained by
:class:`safebeal.align.trainer.PairLossTrainer` with :class:`safebeal.align.losses.SafeAlignLoss`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from safebeal.align.builtin.simpo import SimPOTrainConfig
from safebeal.align.config import ConfigError, option, register_method
from safebeal.align.data import Pair
from safebeal.align.methods import Runtime, pair_loss_trainer


@dataclass
class SafeAlignConfig(SimPOTrainConfig):
    """Safe-Align: SimPO whose reward down-weights the tokens of the k actions both plans share.

    r(x, y) = beta / N(y) * (alpha * sum_{prefix tokens} log p + sum_{rest incl. EOS} log p),
    N(y) = |y| (normaliser=length, the paper's form) or alpha * |prefix| + |rest| (normaliser=weighted).
    alpha=1 is exactly SimPO."""

    alpha: float = option(0.5, "Weight of the shared-prefix tokens in the reward, in [0, 1]; 1 is SimPO.")
    normaliser: str = option("weighted", "Reward denominator: weighted (sum of token weights: alpha changes the prefix's "
                                         "share of the reward) or length (|y| tokens, the paper: alpha then acts only "
                                         "through 1/|y_w| - 1/|y_l|, nothing on equal-length pairs).",
                             ("length", "weighted"))
    disable_dropout: bool = option(True, "Turn model dropout off, as TRL's SimPO does.")

    def validate(self) -> None:
        super().validate()
        if not 0.0 <= self.alpha <= 1.0:
            raise ConfigError(f"alpha must be in [0, 1], got {self.alpha}")


def build_safe_align(cfg: SafeAlignConfig, pairs: Sequence[Pair], model: Any, tok: Any, rt: Runtime,
                     callbacks: list) -> Any:
    from safebeal.align.losses import SafeAlignLoss

    loss = SafeAlignLoss(alpha=cfg.alpha, beta=cfg.beta, gamma=cfg.gamma, sft_weight=cfg.sft_weight,
                         normaliser=cfg.normaliser)
    return pair_loss_trainer(cfg, pairs, model, tok, rt, callbacks, loss, disable_dropout=cfg.disable_dropout)


SAFE_ALIGN = register_method("safe-align", SafeAlignConfig, build_safe_align,
                             ("prompt", "chosen", "rejected", "prefix_actions"),
                             "Safe-Align: SimPO with the shared-prefix tokens weighed by alpha (PairLossTrainer).")
