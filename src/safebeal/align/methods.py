"""Training runs: :func:`train` builds the registered method's trainer (``METHODS`` in :mod:`safebeal.align.config`;
the built-in methods are the modules of :mod:`safebeal.align.builtin`), trains and saves; here too are the helpers
those builders share (:func:`trainer_kwargs`, :func:`preference_rows`, :func:`pair_loss_trainer`, ...).

Every method sees the same text: the prompt rendered by ``render_for_tokenizer`` (as the ``hf`` benchmark backend
renders it) followed by the plan and EOS. After training, ``<out>`` holds a plain transformers model (LoRA merged
into the base weights; the adapter alone is kept in ``<out>/adapter``), its tokenizer, ``train_log.jsonl``,
``trainer_state.json``, ``train_config.json`` and ``train_summary.json``; ``hf:model=<out>`` loads it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from safebeal.align.config import ConfigError, TrainConfig, training_method
from safebeal.align.data import Pair
from safebeal.align.loading import TrainError, load_model, load_tokenizer
from safebeal.align.preflight import preflight


@dataclass
class Runtime:
    """Where and how training runs (resolved from the config and the machine)."""

    use_cpu: bool
    bf16: bool
    gradient_checkpointing: bool
    dtype: str

    @classmethod
    def resolve(cls, cfg: TrainConfig) -> "Runtime":
        import torch

        cuda = torch.cuda.is_available()
        if cfg.device == "cuda" and not cuda:
            raise TrainError("--device cuda requested but CUDA is not available")
        use_cpu = cfg.device == "cpu" or not cuda
        bf16_ok = (not use_cpu) and torch.cuda.is_bf16_supported()
        if cfg.bf16 and not bf16_ok:
            if use_cpu:
                bf16 = False  # CPU: always fp32 (bf16 autocast on CPU is slow and changes results)
            else:
                raise TrainError("--bf16 requested but this GPU does not support bfloat16")
        else:
            bf16 = bf16_ok if cfg.bf16 is None else bool(cfg.bf16)
        dtype = cfg.dtype
        if dtype == "auto":
            dtype = "bfloat16" if bf16 else "float32"
        if use_cpu and dtype != "float32":
            dtype = "float32"
        checkpointing = cfg.gradient_checkpointing if cfg.gradient_checkpointing is not None else True
        return cls(use_cpu, bf16, bool(checkpointing and not use_cpu), dtype)


@dataclass
class TrainResult:
    out: str
    method: str
    steps: int
    n_pairs: int
    seconds: float
    metrics: Dict[str, Any] = field(default_factory=dict)
    last_log: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return {"out": self.out, "method": self.method, "steps": self.steps, "n_pairs": self.n_pairs,
                "seconds": round(self.seconds, 2), "metrics": self.metrics, "last_log": self.last_log}


# -- helpers for the builders ------------------------------------------------------------------------------
def lora_config(cfg: TrainConfig) -> Any:
    if not cfg.lora:
        return None
    from peft import LoraConfig

    targets: Any = cfg.lora_target_modules.strip()
    if targets != "all-linear":
        targets = [t.strip() for t in targets.split(",") if t.strip()]
        if not targets:
            raise ConfigError("lora_target_modules is empty")
    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, task_type="CAUSAL_LM")


def is_peft_model(model: Any) -> bool:
    """Whether ``model`` already carries LoRA adapters (a chained recipe that keeps the SFT adapter)."""
    try:
        from peft import PeftModel
    except ImportError:  # pragma: no cover - peft comes with the [train] extra
        return False
    return isinstance(model, PeftModel)


def model_lora_config(cfg: TrainConfig, model: Any) -> Any:
    """The LoRA config to wrap ``model`` in: none when it has adapters already (they go on training)."""
    return None if is_peft_model(model) else lora_config(cfg)


def trainer_kwargs(cfg: TrainConfig, rt: Runtime) -> Dict[str, Any]:
    """TrainingArguments fields shared by all methods (TRL's configs subclass TrainingArguments)."""
    kwargs = dict(
        output_dir=cfg.out, per_device_train_batch_size=cfg.batch_size, gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.lr, num_train_epochs=cfg.epochs, max_steps=cfg.max_steps, warmup_steps=cfg.warmup_ratio,
        weight_decay=cfg.weight_decay, seed=cfg.seed, data_seed=cfg.seed, logging_steps=cfg.logging_steps,
        save_strategy="steps" if cfg.save_steps else "no", save_steps=cfg.save_steps or 500, report_to="none",
        disable_tqdm=not cfg.progress, use_cpu=rt.use_cpu, bf16=rt.bf16,
        dataloader_num_workers=0,
    )
    if rt.gradient_checkpointing:  # passed only when on: transformers warns about the argument's name otherwise
        kwargs["gradient_checkpointing"] = True
    if cfg.group_by_length:
        kwargs["train_sampling_strategy"] = "group_by_length"
    return kwargs


def rendered_prompt(tokenizer: Any, prompt: Any) -> str:
    from safebeal.planners.backends import render_for_tokenizer

    return render_for_tokenizer(tokenizer, prompt)


def hf_dataset(rows: List[Dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list(rows)


def preference_rows(tok: Any, pairs: Sequence[Pair], max_length: Optional[int] = None) -> tuple:
    """(rows, dropped): with ``max_length``, pairs whose prompt alone leaves no room for a completion token are
    dropped, as Safe-Align's PairDataset drops them: TRL's CPO (SimPO) divides by the completion length and turned
    the whole batch's loss into NaN on one such pair."""
    rows, dropped = [], 0
    for p in pairs:
        prompt = rendered_prompt(tok, p.prompt)
        if max_length is not None and len(tok(prompt, add_special_tokens=False)["input_ids"]) + 1 >= max_length:
            dropped += 1
            continue
        rows.append({"prompt": prompt, "chosen": p.chosen, "rejected": p.rejected or ""})
    if not rows:
        raise TrainError(f"every pair's prompt fills max_length={max_length}; raise --max-length")
    return rows, dropped


def trl_preference_trainer(trainer_cls: Any, args: Any, cfg: TrainConfig, pairs: Sequence[Pair], model: Any, tok: Any,
                           callbacks: list) -> Any:
    """A TRL preference trainer (``DPOTrainer``, ``CPOTrainer``, ...) of class ``trainer_cls`` with ``args`` on
    ``pairs``: the rendered rows (pairs whose prompt alone fills ``max_length`` dropped, counted in
    ``trainer.dropped_pairs``), length grouping, and the LoRA adapters of ``cfg``. The builder of every method that
    trains with TRL's own preference loss (``dpo``, ``simpo``)."""
    from safebeal.align.sampling import with_length_grouping

    rows, dropped = preference_rows(tok, pairs, cfg.max_length)
    trainer = with_length_grouping(trainer_cls)(model=model, args=args, train_dataset=hf_dataset(rows),
                                                processing_class=tok, peft_config=model_lora_config(cfg, model),
                                                callbacks=callbacks)
    trainer.dropped_pairs = dropped
    return trainer


def pair_loss_trainer(cfg: TrainConfig, pairs: Sequence[Pair], model: Any, tok: Any, rt: Runtime, callbacks: list,
                      loss: Any, disable_dropout: bool = False) -> Any:
    """A :class:`safebeal.align.trainer.PairLossTrainer` training ``loss`` (a :class:`safebeal.align.losses.PairLoss`)
    on ``pairs``: the builder of every method that brings its own pair loss (``safe-align``, a user's loss)."""
    from transformers import TrainingArguments

    from safebeal.align.encoding import PairCollator, PairDataset
    from safebeal.align.trainer import PairLossTrainer

    dataset = PairDataset(tok, pairs, cfg.max_length)
    peft = model_lora_config(cfg, model)
    if peft is None and is_peft_model(model) and rt.gradient_checkpointing:
        model.enable_input_require_grads()
    if peft is not None:
        from peft import get_peft_model

        if rt.gradient_checkpointing:
            model.enable_input_require_grads()
        model = get_peft_model(model, peft)
    if disable_dropout:
        from trl.trainer.utils import disable_dropout_in_model

        disable_dropout_in_model(model)
    model.config.pad_token_id = tok.pad_token_id
    args = TrainingArguments(**trainer_kwargs(cfg, rt), remove_unused_columns=False)
    trainer = PairLossTrainer(model=model, args=args, train_dataset=dataset, data_collator=PairCollator(tok.pad_token_id),
                              processing_class=tok, callbacks=callbacks, loss=loss)
    trainer.dropped_pairs = dataset.dropped
    return trainer


# -- the run ------------------------------------------------------------------------------------------------
def build_trainer(cfg: TrainConfig, pairs: Sequence[Pair], model: Any = None, tokenizer: Any = None,
                  callbacks: Optional[list] = None) -> Any:
    """The method's trainer, ready to ``.train()``; loads model and tokenizer unless given."""
    from transformers.utils import logging as hf_logging

    rt = Runtime.resolve(cfg)
    tok = tokenizer if tokenizer is not None else load_tokenizer(cfg.model, cfg.trust_remote_code)
    net = model if model is not None else load_model(cfg.model, rt.dtype, cfg.trust_remote_code)
    hf_logging.set_verbosity_error()
    method = training_method(cfg.method)
    if method.build is None:
        raise ConfigError(f"{cfg.method} is a chained recipe: run it with safebeal.align.recipe.run_recipe")
    return method.build(cfg, pairs, net, tok, rt, list(callbacks or []))


def _versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("safebeal", "torch", "transformers", "trl", "peft", "accelerate", "datasets"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def save_model(trainer: Any, cfg: TrainConfig, rt: Runtime, tok: Any) -> None:
    """Write the trained model to ``cfg.out`` as a plain transformers model (see module docstring).

    With LoRA the adapter is saved through ``trainer.save_model`` (which gathers ZeRO-3 shards), then the main
    process merges it into a freshly loaded base model and saves the result. After a distributed run (DDP,
    DeepSpeed) the merge runs in a separate process with no distributed state: under ZeRO-3 a base model loaded
    inside the job goes through ``deepspeed.zero.Init`` and rank 0 alone deadlocks (``safebeal.align.merge``)."""
    out = Path(cfg.out)
    if not cfg.lora:
        trainer.save_model(str(out))
        if trainer.is_world_process_zero():
            tok.save_pretrained(out)
        return
    adapter = out / "adapter"
    trainer.save_model(str(adapter))
    if trainer.is_world_process_zero():
        tok.save_pretrained(adapter)
        if cfg.merge:
            from safebeal.align.merge import merge_adapter, merge_in_subprocess  # merge imports loading, not this

            distributed = trainer.accelerator.num_processes > 1 or trainer.is_deepspeed_enabled
            merge = merge_in_subprocess if distributed else merge_adapter
            merge(cfg.model, adapter, out, rt.dtype, cfg.trust_remote_code, tok.pad_token_id)
            tok.save_pretrained(out)
    trainer.accelerator.wait_for_everyone()


def train(cfg: TrainConfig, pairs: Optional[Sequence[Pair]] = None, model: Any = None) -> TrainResult:
    """Check everything, train, save. Bad input raises a SafebealError before any model is loaded. ``model``: an
    already loaded model to train instead of loading ``cfg.model`` (a chained recipe passes the base model with
    the SFT adapter; ``cfg.model`` stays the base the adapter is merged into)."""
    if "+" in cfg.method:
        raise ConfigError(f"{cfg.method} is a chained recipe: run it with safebeal.align.recipe.run_recipe")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if pairs is None:
        pairs = preflight(cfg)
    from safebeal.align.callbacks import JsonlLogger

    start = time.perf_counter()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    rt = Runtime.resolve(cfg)
    tok = load_tokenizer(cfg.model, cfg.trust_remote_code)
    trainer = build_trainer(cfg, pairs, model=model, tokenizer=tok,
                            callbacks=[JsonlLogger(out / "train_log.jsonl", cfg.method)])
    if trainer.is_world_process_zero():
        (out / "train_config.json").write_text(json.dumps(
            {**cfg.to_dict(), "runtime": rt.__dict__, "n_pairs": len(pairs), "versions": _versions()}, indent=1))
    output = trainer.train()
    trainer.save_state()  # <out>/trainer_state.json (log history, per-step metrics)
    save_model(trainer, cfg, rt, tok)
    history = [h for h in trainer.state.log_history if "loss" in h]
    result = TrainResult(str(out), cfg.method, trainer.state.global_step, len(pairs), time.perf_counter() - start,
                         dict(output.metrics), history[-1] if history else {})
    if trainer.is_world_process_zero():
        (out / "train_summary.json").write_text(json.dumps(result.to_dict(), indent=1))
    return result
