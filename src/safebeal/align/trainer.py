"""``PairLossTrainer``: a ``transformers.Trainer`` computing a pair loss of ``losses.py`` (Safe-Align's, or any
other :class:`safebeal.align.losses.PairLoss`).

One forward pass per batch over the chosen and rejected rows together (as TRL's SimPO does); no reference model.
The batch is left-padded, so logits are computed only for the completion positions (``logits_to_keep``).

Metrics (``rewards/chosen``, ``rewards/rejected``, ``rewards/margins``, ``rewards/accuracies``, ``logps/*``,
``nll_loss``, ``prefix_fraction``) are gathered across processes with ``accelerator.gather_for_metrics`` at every
step, kept until the next logging step and averaged there, so under ``accelerate launch`` the logged figures are
over all ranks' pairs, not rank 0's. The ``loss`` itself is reduced across ranks by ``Trainer``.
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from typing import Any, Dict, List, Optional

import torch
from transformers import Trainer

from safebeal.align.losses import PairLoss, token_logps
from safebeal.align.sampling import LengthGroupingMixin


class PairLossTrainer(LengthGroupingMixin, Trainer):
    """``Trainer`` with a pairwise loss: the keyword argument ``loss``, a :class:`safebeal.align.losses.PairLoss`
    (e.g. ``SafeAlignLoss(alpha=0.5)``). The train dataset is an ``encoding.PairDataset`` and the collator an
    ``encoding.PairCollator``."""

    loss_is_scaled_for_ga = False  # compute_loss returns a per-batch mean: let Trainer divide by grad-accum steps

    def __init__(self, *args: Any, loss: PairLoss, **kwargs: Any):
        self.pair_loss = loss
        self._stored: Dict[str, Dict[str, List[float]]] = {"train": defaultdict(list), "eval": defaultdict(list)}
        super().__init__(*args, **kwargs)
        self.args.remove_unused_columns = False
        self._keep_ok = self._accepts_logits_to_keep(self.accelerator.unwrap_model(self.model))

    @staticmethod
    def _accepts_logits_to_keep(model: Any) -> bool:
        """Whether the underlying causal LM (below any peft wrapper) names ``logits_to_keep`` in its forward.
        Without it the full logits come back and are sliced here: slower, same result."""
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        return "logits_to_keep" in inspect.signature(base.forward).parameters

    # -- forward ------------------------------------------------------------------------------------------
    def pair_logps(self, model: Any, inputs: Dict[str, Any]) -> tuple:
        """Per-token log-probs of the completion positions: (logps, completion_mask, prefix_mask), each (2B, T)."""
        keep = int(inputs["keep"])
        length = inputs["input_ids"].shape[1]
        kwargs = {"attention_mask": inputs["attention_mask"], "position_ids": inputs["position_ids"], "use_cache": False}
        if self._keep_ok:
            kwargs["logits_to_keep"] = keep + 1
        logits = model(inputs["input_ids"], **kwargs).logits
        logits = logits[:, -(keep + 1):-1, :]  # position t-1 predicts token t; the last position predicts nothing
        targets = inputs["input_ids"][:, length - keep:]
        logps = token_logps(logits.float() if logits.dtype != torch.float32 else logits, targets)
        return logps, inputs["completion_mask"][:, length - keep:], inputs["prefix_mask"][:, length - keep:]

    def batch_loss(self, model: Any, inputs: Dict[str, Any]) -> Dict[str, torch.Tensor]:
        logps, completion, prefix = self.pair_logps(model, inputs)
        return self.pair_loss(logps, completion, prefix, int(inputs["n_pairs"]))

    def compute_loss(self, model: Any, inputs: Dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Optional[Any] = None) -> Any:
        out = self.batch_loss(model, inputs)
        self._store("train" if model.training else "eval", out)
        return (out["loss"], out) if return_outputs else out["loss"]

    # -- metrics ------------------------------------------------------------------------------------------
    _PAIR_METRICS = ("rewards/chosen", "rewards/rejected", "rewards/margins", "rewards/accuracies", "logps/chosen",
                     "logps/rejected", "prefix_fraction", "nll_loss")

    def _store(self, split: str, out: Dict[str, torch.Tensor]) -> None:
        """Per-pair metrics, gathered from every process in one collective, averaged into the stored lists."""
        rw, rl = out["reward_chosen"].detach(), out["reward_rejected"].detach()
        n = rw.shape[0]
        frac = out["prefix_fraction"].detach()
        cols = [rw, rl, rw - rl, (rw > rl).to(rw.dtype), out["avg_logp_chosen"].detach(),
                out["avg_logp_rejected"].detach(), (frac[:n] + frac[n:]) / 2,
                out["nll"].detach().to(rw.dtype).expand(n)]
        table = self.accelerator.gather_for_metrics(torch.stack(cols, dim=1).float()).mean(dim=0).tolist()
        prefix = "eval_" if split == "eval" else ""
        for key, value in zip(self._PAIR_METRICS, table):
            self._stored[split][prefix + key].append(value)

    def log(self, logs: Dict[str, float], start_time: Optional[float] = None) -> None:
        split = "train" if "loss" in logs else "eval"
        for key, vals in self._stored[split].items():
            if vals:
                logs[key] = sum(vals) / len(vals)
        self._stored[split] = defaultdict(list)
        super().log(logs, start_time)

    def prediction_step(self, model: Any, inputs: Dict[str, Any], prediction_loss_only: bool,
                        ignore_keys: Optional[List[str]] = None) -> tuple:
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad():
            out = self.batch_loss(model, inputs)
        self._store("eval", out)
        return out["loss"].detach(), None, None

    @torch.no_grad()
    def score(self, dataset: Any = None, batch_size: int = 8) -> Dict[str, float]:
        """Loss, pair accuracy and mean margin of the current model over ``dataset`` (default: the train set),
        without training (used to check that training helped)."""
        dataset = dataset if dataset is not None else self.train_dataset
        model = self.model
        was_training = model.training
        model.eval()
        losses, wins, margins = [], [], []
        try:
            for i in range(0, len(dataset), batch_size):
                batch = self.data_collator([dataset[j] for j in range(i, min(len(dataset), i + batch_size))])
                batch = self._prepare_inputs(batch)
                out = self.batch_loss(model, batch)
                losses += out["losses"].tolist()
                margin = out["reward_chosen"] - out["reward_rejected"]
                margins += margin.tolist()
                wins += (margin > 0).float().tolist()
        finally:
            model.train(was_training)
        n = max(1, len(losses))
        return {"loss": sum(losses) / n, "accuracy": sum(wins) / n, "margin": sum(margins) / n, "n": len(losses)}
