"""Training logs in the output directory: one JSON line per logging step (``train_log.jsonl``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, Optional

from transformers import TrainerCallback

#: TRL/Safe-Align metric names -> the short names every method's log line also carries
ALIASES = {"rewards/margins": "reward_margin", "rewards/accuracies": "pair_accuracy"}


class JsonlLogger(TrainerCallback):
    """Appends ``{"step", "epoch", **logs}`` to ``path`` on the main process at every ``on_log``.

    The values are what ``Trainer.log`` received, so for every method they are already reduced across ranks
    (``loss`` by Trainer, the reward metrics by TRL's or Safe-Align's ``gather_for_metrics``)."""

    def __init__(self, path: Path | str, method: str):
        self.path = Path(path)
        self.method = method
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")

    def on_log(self, args: Any, state: Any, control: Any, logs: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        rec: Dict[str, Any] = {"method": self.method, "step": state.global_step, "epoch": state.epoch}
        for key, value in logs.items():
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            rec[key] = value
            if key in ALIASES:
                rec[ALIASES[key]] = value
        with self.path.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
