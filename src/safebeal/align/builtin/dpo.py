"""``dpo``: Direct Preference Optimization (TRL ``DPOTrainer``); with LoRA the reference model is the base with
adapters disabled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from safebeal.align.config import ConfigError, TrainConfig, option, register_method
from safebeal.align.data import Pair
from safebeal.align.methods import Runtime, trainer_kwargs, trl_preference_trainer


@dataclass
class DPOTrainConfig(TrainConfig):
    """Direct Preference Optimization (TRL DPOTrainer); the reference model is the base (adapters disabled with LoRA)."""

    beta: float = option(0.1, "beta: the reward scale (for dpo, the strength of the pull towards the reference model).")

    def validate(self) -> None:
        super().validate()
        if self.beta <= 0:
            raise ConfigError(f"beta must be > 0, got {self.beta}")


def build_dpo(cfg: DPOTrainConfig, pairs: Sequence[Pair], model: Any, tok: Any, rt: Runtime, callbacks: list) -> Any:
    from trl import DPOConfig, DPOTrainer

    args = DPOConfig(**trainer_kwargs(cfg, rt), beta=cfg.beta, max_length=cfg.max_length)
    return trl_preference_trainer(DPOTrainer, args, cfg, pairs, model, tok, callbacks)


DPO = register_method("dpo", DPOTrainConfig, build_dpo, ("prompt", "chosen", "rejected"),
                      "Direct Preference Optimization against the base model (TRL DPOTrainer).")
