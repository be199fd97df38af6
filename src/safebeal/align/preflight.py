"""Checks that run before any model is loaded, so bad input fails in a second with a one-line error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

from safebeal.align.config import TrainConfig
from safebeal.align.data import Pair, load_pairs
from safebeal.errors import SafebealError
from safebeal.planners.backends.base import looks_like_path


class ModelPathError(SafebealError):
    pass


class OutputDirError(SafebealError):
    pass


class VersionError(SafebealError):
    pass


#: the oldest transformers the trainers work with: ``Trainer.loss_is_scaled_for_ga`` (5.19) tells Trainer that
#: Safe-Align's loss is a per-batch mean to divide by the gradient-accumulation steps; on older versions the
#: attribute is silently ignored and accumulation scales the loss differently. ``train_sampling_strategy`` is 5.x.
MIN_TRANSFORMERS = (5, 19)


def check_transformers(installed: str | None = None) -> None:
    """Refuse a transformers the trainers would run wrongly on (pyproject pins the same range)."""
    if installed is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version("transformers")
        except PackageNotFoundError:
            return  # the import fails later with its own message
    parts = []
    for x in installed.split(".")[:2]:
        digits = "".join(ch for ch in x if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    if tuple(parts) < MIN_TRANSFORMERS or parts[0] >= 6:
        raise VersionError(f"transformers {installed} is installed; training needs >={MIN_TRANSFORMERS[0]}."
                           f"{MIN_TRANSFORMERS[1]},<6 (pip install 'safebeal[train]')")


def resolve_training_model(model: str) -> str:
    """A local model directory (must exist and hold a config.json) or a hub id: the backends' rule
    (:func:`~safebeal.planners.backends.base.resolve_backend_model`) with training's own errors and the config.json
    check."""
    expanded = os.path.expanduser(model)
    if os.path.exists(expanded):
        if not os.path.isdir(expanded):
            raise ModelPathError(f"--model {model!r} is a file; give the model directory")
        if not os.path.exists(os.path.join(expanded, "config.json")):
            raise ModelPathError(f"--model {model!r}: no config.json in that directory (not a transformers model)")
        return expanded
    if looks_like_path(model):
        raise ModelPathError(f"--model path {model!r} does not exist")
    return model


#: files whose presence means <out> already holds a trained model or training logs
_OUTPUT_MARKERS = ("config.json", "adapter", "train_log.jsonl", "trainer_state.json")


def check_out(out: str, overwrite: bool) -> None:
    p = Path(out).expanduser()
    if p.exists() and not p.is_dir():
        raise OutputDirError(f"--out {out!r} is a file")
    if not overwrite and p.is_dir() and any((p / m).exists() for m in _OUTPUT_MARKERS):
        raise OutputDirError(f"--out {out!r} already holds a trained model or logs; pass --overwrite to replace them")


def preflight(cfg: TrainConfig) -> List[Pair]:
    """Validate config, model path, output directory and data; return the checked pairs."""
    cfg.validate()
    check_transformers()
    resolve_training_model(cfg.model)
    check_out(cfg.out, cfg.overwrite)
    return load_pairs(cfg.data, cfg.method, cfg.limit)
