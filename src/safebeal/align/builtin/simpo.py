"""``simpo``: SimPO, TRL ``trl.experimental.cpo.CPOTrainer(loss_type="simpo", cpo_alpha=sft_weight)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from safebeal.align.config import ConfigError, TrainConfig, option, register_method
from safebeal.align.data import Pair
from safebeal.align.methods import Runtime, trainer_kwargs, trl_preference_trainer


@dataclass
class SimPOTrainConfig(TrainConfig):
    """SimPO (TRL CPOTrainer, loss_type=simpo): reference-free, length-normalised reward with a target margin.

    beta=2.0 and gamma_beta_ratio=0.25 (gamma=0.5) are SimPO's published defaults; the SFT term is on (weight 1,
    SimPO publishes 0), because unanchored preference training collapsed in the project's ablation."""

    beta: float = option(2.0, "Reward scale beta (SimPO default 2.0).")
    gamma_beta_ratio: float = option(0.25, "Target margin gamma as a fraction of beta: gamma = gamma_beta_ratio * beta (SimPO default 0.25).")
    sft_weight: float = option(1.0, "Weight of the NLL of the safe plan added to the loss (TRL's cpo_alpha). Default 1: "
                                    "without it every preference method collapsed in docs/experiments.md; 0 is SimPO's "
                                    "published form.")

    @property
    def gamma(self) -> float:
        return self.gamma_beta_ratio * self.beta

    def validate(self) -> None:
        super().validate()
        if self.beta <= 0:
            raise ConfigError(f"beta must be > 0, got {self.beta}")
        if self.gamma_beta_ratio < 0:
            raise ConfigError(f"gamma_beta_ratio must be >= 0, got {self.gamma_beta_ratio}")
        if self.sft_weight < 0:
            raise ConfigError(f"sft_weight must be >= 0, got {self.sft_weight}")


def build_simpo(cfg: SimPOTrainConfig, pairs: Sequence[Pair], model: Any, tok: Any, rt: Runtime, callbacks: list) -> Any:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "experimental" notice
        from trl.experimental.cpo import CPOConfig, CPOTrainer

    args = CPOConfig(**trainer_kwargs(cfg, rt), loss_type="simpo", beta=cfg.beta, simpo_gamma=cfg.gamma,
                     cpo_alpha=cfg.sft_weight, max_length=cfg.max_length, remove_unused_columns=False)
    return trl_preference_trainer(CPOTrainer, args, cfg, pairs, model, tok, callbacks)


SIMPO = register_method("simpo", SimPOTrainConfig, build_simpo, ("prompt", "chosen", "rejected"),
                        "SimPO: reference-free, length-normalised reward with a target margin (TRL CPOTrainer).")
