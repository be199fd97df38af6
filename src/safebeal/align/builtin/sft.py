"""``sft``: supervised fine-tuning on the safe plans (TRL ``SFTTrainer`` on (prompt, chosen), loss on completion
tokens only; one example per distinct (prompt, chosen))."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from safebeal.align.config import TrainConfig, option, register_method
from safebeal.align.data import Pair, dedupe_sft
from safebeal.align.methods import Runtime, hf_dataset, model_lora_config, rendered_prompt, trainer_kwargs


@dataclass
class SFTTrainConfig(TrainConfig):
    """Supervised fine-tuning on the safe plans (``chosen``), loss on completion tokens only (TRL SFTTrainer)."""

    lr: float = option(2e-4, "Peak learning rate.")


def build_sft(cfg: SFTTrainConfig, pairs: Sequence[Pair], model: Any, tok: Any, rt: Runtime, callbacks: list) -> Any:
    from trl import SFTConfig, SFTTrainer

    rows = [{"prompt": rendered_prompt(tok, p.prompt), "completion": p.chosen} for p in dedupe_sft(pairs)]
    args = SFTConfig(**trainer_kwargs(cfg, rt), max_length=cfg.max_length, completion_only_loss=True, packing=False)
    return SFTTrainer(model=model, args=args, train_dataset=hf_dataset(rows), processing_class=tok,
                      peft_config=model_lora_config(cfg, model), callbacks=callbacks)


SFT = register_method("sft", SFTTrainConfig, build_sft, ("prompt", "chosen"),
                      "Supervised fine-tuning on the safe plans (TRL SFTTrainer).")
