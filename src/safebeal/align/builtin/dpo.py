"""``dpo``: Direct Preference Optimization (TRL ``DPOTrainer``); with LoRA the reference model is the base with
adapters disabled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from safebeal.align.config import ConfigError, TrainConfig, option, register_method
from safebeal.align.data import Pair
from safebeal.align.methods import Runtime, hf_dataset, model_lora_config, preference_rows, trainer_kwargs


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

    from safebeal.align.sampling import with_length_grouping

    args = DPOConfig(**trainer_kwargs(cfg, rt), beta=cfg.beta, max_length=cfg.max_length)
    rows, dropped = preference_rows(tok, pairs, cfg.max_length)
    trainer = with_length_grouping(DPOTrainer)(model=model, args=args, train_dataset=hf_dataset(rows),
                                               processing_class=tok, peft_config=model_lora_config(cfg, model), callbacks=callbacks)
    trainer.dropped_pairs = dropped
    return trainer


DPO = register_method("dpo", DPOTrainConfig, build_dpo, ("prompt", "chosen", "rejected"),
                      "Direct Preference Optimization against the base model (TRL DPOTrainer).")
