"""Chained recipes: ``safebeal train --method sft+safe-align`` (also ``sft+dpo``, ``sft+simpo``).

The paper's recipe: LoRA-SFT of the base model on ActivityPrograms' training programs and WorldModel's data, then
preference training from the SFT model. One run directory holds both stages:

    <out>/sft/            the SFT stage: its model (merged) or adapter, train_log.jsonl, train_config.json, ...
    <out>/                the preference stage: the final model (hf:model=<out>), its logs and train_config.json
    <out>/recipe.json     both stages' resolved configs, their outputs and results

With ``sft_merge`` (the default) the SFT adapter is merged into the base and the preference stage trains a fresh
LoRA on the merged SFT model, which is also DPO's reference. With ``--no-sft-merge`` the preference stage loads the
base with the SFT adapter and goes on training that adapter (simpo and safe-align; DPO's reference would be the
base, so sft+dpo refuses it); the final model is the base with that adapter merged in.

Every input of both stages (config, model path, output directories, preference pairs, SFT sources) is checked
before the first model is loaded.
"""

from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from safebeal.align.config import ConfigError, TrainConfig, is_chained, stage_configs
from safebeal.align.data import WORLDMODEL_PREFIX, Pair, PairDataError, load_pairs, load_worldmodel
from safebeal.align.loading import load_model
from safebeal.align.methods import Runtime, TrainResult, train
from safebeal.align.preflight import check_out, check_transformers, resolve_training_model
from safebeal.errors import SafebealError

DATASET_PREFIX = "dataset:"
RECIPE_FILE = "recipe.json"
SFT_DIR = "sft"


def _dataset_examples(spec: str, limit: int) -> List[Pair]:
    """The reference plans of a registered dataset, prompted as the benchmark prompts its tasks."""
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.prompts import build_messages, completion_text
    from safebeal.scene.script import parse_script

    if not spec.strip():
        raise PairDataError("give a dataset name after dataset: (e.g. dataset:activity-train)")
    try:
        tasks = DATASETS.create(spec).tasks()
    except SafebealError as exc:
        raise PairDataError(f"sft data dataset:{spec}: {exc}") from None
    out = []
    for t in tasks:
        if not (t.reference or "").strip():
            continue
        try:  # the plan as planners write it (ActivityPrograms' "(1.319)" ids become "(319)")
            plan = completion_text([str(ln) for ln in parse_script(t.reference, f"dataset:{spec} {t.id}").lines])
        except SafebealError as exc:
            raise PairDataError(f"sft data dataset:{spec}: task {t.id}: {exc}") from None
        out.append(Pair(build_messages(t), plan, None, 0, "", t.id, f"dataset:{spec}"))
        if limit and len(out) >= limit:
            break
    if not out:
        raise PairDataError(f"sft data dataset:{spec}: no task has a reference plan to train on")
    return out


def load_sft_examples(sources: str, limit: int = 0) -> List[Pair]:
    """SFT examples of a comma list of sources (``dataset:NAME``, ``worldmodel:PATH`` or a pair dataset path, of
    which the chosen plans are used); ``limit`` applies to each source. Raises PairDataError."""
    parts = [s.strip() for s in str(sources).split(",") if s.strip()]
    if not parts:
        raise PairDataError("--sft-data names no source")
    out: List[Pair] = []
    for src in parts:
        if src.startswith(DATASET_PREFIX):
            out += _dataset_examples(src[len(DATASET_PREFIX):], limit)
        elif src.startswith(WORLDMODEL_PREFIX):
            out += load_worldmodel(src[len(WORLDMODEL_PREFIX):], "sft", limit)
        else:
            out += load_pairs(src, "sft", limit)
    return out


@dataclass
class RecipeResult:
    out: str
    method: str
    stages: List[TrainResult] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.stages)


def _is_main() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def _write(path: Path, doc: Dict[str, Any]) -> None:
    if _is_main():
        path.write_text(json.dumps(doc, indent=1))


def _free_memory() -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass


def _adapter_model(pref: TrainConfig, sft_out: Path) -> Any:
    """The base model with the SFT adapter, trainable (``--no-sft-merge``)."""
    from peft import PeftModel

    base = load_model(pref.model, Runtime.resolve(pref).dtype, pref.trust_remote_code)
    return PeftModel.from_pretrained(base, str(sft_out / "adapter"), is_trainable=True)


def run_recipe(cfg: TrainConfig) -> RecipeResult:
    """Check both stages' input, then train SFT into ``<out>/sft`` and the preference method into ``<out>``."""
    if not is_chained(cfg.method):
        raise ConfigError(f"{cfg.method} is not a chained method (sft+<a preference method>)")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg.validate()
    check_transformers()
    resolve_training_model(cfg.model)
    out = Path(cfg.out).expanduser()
    sft_out = out / SFT_DIR
    check_out(str(out), cfg.overwrite)
    check_out(str(sft_out), cfg.overwrite)
    sft_cfg, pref_cfg = stage_configs(cfg, str(sft_out))
    pref_pairs = load_pairs(cfg.data, pref_cfg.method, cfg.limit)
    sft_examples = load_sft_examples(cfg.sft_data, cfg.sft_limit)

    out.mkdir(parents=True, exist_ok=True)
    doc: Dict[str, Any] = {
        "method": cfg.method, "config": cfg.to_dict(),
        "stages": [
            {"name": "sft", "out": SFT_DIR, "n_examples": len(sft_examples), "config": sft_cfg.to_dict()},
            {"name": pref_cfg.method, "out": ".", "n_pairs": len(pref_pairs), "starts_from":
                "sft model (merged)" if cfg.sft_merge else "base + sft adapter", "config": pref_cfg.to_dict()},
        ],
    }
    _write(out / RECIPE_FILE, doc)
    result = RecipeResult(str(out), cfg.method)
    result.stages.append(train(sft_cfg, sft_examples))
    doc["stages"][0]["result"] = result.stages[0].to_dict()
    _write(out / RECIPE_FILE, doc)
    _free_memory()
    model: Optional[Any] = None if cfg.sft_merge else _adapter_model(pref_cfg, sft_out)
    result.stages.append(train(pref_cfg, pref_pairs, model=model))
    doc["stages"][1]["result"] = result.stages[1].to_dict()
    _write(out / RECIPE_FILE, doc)
    return result
