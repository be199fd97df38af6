"""The Safe-Align loss, as plain tensor functions.

For a pair (x, y_w, y_l) whose first k actions are identical::

    r(x, y) = beta / N(y) * ( alpha * sum_{prefix tokens} log p + sum_{rest, incl. EOS} log p )
    loss    = -log sigmoid( r(x, y_w) - r(x, y_l) - gamma ) + sft_weight * NLL(y_w)

``N(y)`` comes from :data:`NORMALISERS`: ``length`` = |y| (completion tokens, the paper's form) or ``weighted`` =
alpha * |prefix| + |rest| (the sum of the token weights). With alpha = 1 both equal |y| and the loss is SimPO's.
``NLL(y_w)`` is the mean negative log-likelihood over all chosen completion tokens of the batch (a token-level
mean, as TRL's CPO/SimPO ``cpo_alpha`` term).

A pair loss is a callable ``loss(logps, completion_mask, prefix_mask, n_pairs) -> dict`` (:class:`PairLoss`)
registered in :data:`LOSSES`; :class:`safebeal.align.trainer.PairLossTrainer` trains any of them. Built in:
``safe-align`` (:class:`SafeAlignLoss`). A new loss is one module: the loss, registered here, and the method that
trains it (``docs/examples/extending/my_loss.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Protocol

import torch
import torch.nn.functional as F

from safebeal.registry import Registry

Normaliser = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

#: name -> denominator of the reward, from (completion token count, sum of token weights), per sequence
NORMALISERS: Dict[str, Normaliser] = {
    "length": lambda n_tokens, weight_sum: n_tokens,
    "weighted": lambda n_tokens, weight_sum: weight_sum,
}


def token_logps(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) per position, without materialising a full log-softmax copy (TRL's selective_log_softmax)."""
    from trl.trainer.utils import selective_log_softmax

    return selective_log_softmax(logits, targets)


def sequence_rewards(
    logps: torch.Tensor,
    completion_mask: torch.Tensor,
    prefix_mask: torch.Tensor,
    alpha: float,
    beta: float,
    normaliser: str = "length",
) -> Dict[str, torch.Tensor]:
    """Per-sequence reward and the sums it is made of. All inputs are (rows, T); masks are bool."""
    completion = completion_mask
    prefix = prefix_mask & completion
    rest = completion & ~prefix
    zero = torch.zeros((), dtype=logps.dtype, device=logps.device)
    # torch.where, not multiplication: positions outside the completion never leak NaN/inf into the sums
    sum_prefix = torch.where(prefix, logps, zero).sum(-1)
    sum_rest = torch.where(rest, logps, zero).sum(-1)
    n_prefix = prefix.sum(-1).to(logps.dtype)
    n_rest = rest.sum(-1).to(logps.dtype)
    n_tokens = n_prefix + n_rest
    weight_sum = alpha * n_prefix + n_rest
    denom = NORMALISERS[normaliser](n_tokens, weight_sum).clamp(min=1e-8)
    reward = beta * (alpha * sum_prefix + sum_rest) / denom
    return {"reward": reward, "sum_prefix": sum_prefix, "sum_rest": sum_rest, "n_prefix": n_prefix,
            "n_tokens": n_tokens, "avg_logp": (sum_prefix + sum_rest) / n_tokens.clamp(min=1.0)}


def preference_loss(reward_chosen: torch.Tensor, reward_rejected: torch.Tensor, gamma: float) -> torch.Tensor:
    """Per-pair ``-log sigmoid(r_w - r_l - gamma)``."""
    return -F.logsigmoid(reward_chosen - reward_rejected - gamma)


def chosen_nll(logps: torch.Tensor, completion_mask: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood over every chosen completion token of the batch."""
    zero = torch.zeros((), dtype=logps.dtype, device=logps.device)
    return -torch.where(completion_mask, logps, zero).sum() / completion_mask.sum().clamp(min=1)


def safe_align_loss(
    logps: torch.Tensor,
    completion_mask: torch.Tensor,
    prefix_mask: torch.Tensor,
    n_pairs: int,
    alpha: float,
    beta: float,
    gamma: float,
    sft_weight: float = 0.0,
    normaliser: str = "length",
) -> Dict[str, torch.Tensor]:
    """Batch loss from per-token log-probs of 2 * n_pairs rows (chosen rows first, then rejected rows)."""
    r = sequence_rewards(logps, completion_mask, prefix_mask, alpha, beta, normaliser)
    rw, rl = r["reward"][:n_pairs], r["reward"][n_pairs:]
    losses = preference_loss(rw, rl, gamma)
    nll = chosen_nll(logps[:n_pairs], completion_mask[:n_pairs]) if sft_weight else torch.zeros((), device=logps.device)
    loss = losses.mean() + sft_weight * nll
    return {"loss": loss, "losses": losses, "reward_chosen": rw, "reward_rejected": rl, "nll": nll,
            "avg_logp_chosen": r["avg_logp"][:n_pairs], "avg_logp_rejected": r["avg_logp"][n_pairs:],
            "prefix_fraction": r["n_prefix"] / r["n_tokens"].clamp(min=1.0)}


class PairLoss(Protocol):
    """A pairwise loss over one batch of ``2 * n_pairs`` rows (chosen rows first, then rejected rows).

    Inputs are (rows, T): ``logps`` the per-token log-probs of the completion positions, ``completion_mask`` and
    ``prefix_mask`` bool (``prefix_mask``: the tokens of the k actions both plans share). The result holds the batch
    ``loss`` (a scalar to minimise) and, per pair, ``losses``, ``reward_chosen``, ``reward_rejected``,
    ``avg_logp_chosen``, ``avg_logp_rejected``, ``prefix_fraction`` (per row), and ``nll`` (a scalar): the trainer
    logs them as ``rewards/*``, ``logps/*``, ``prefix_fraction`` and ``nll_loss``."""

    def __call__(self, logps: torch.Tensor, completion_mask: torch.Tensor, prefix_mask: torch.Tensor,
                 n_pairs: int) -> Dict[str, torch.Tensor]: ...


#: every pair loss by name (``LOSSES.create("safe-align:alpha=0.5")``)
LOSSES: Registry[PairLoss] = Registry("loss")


@LOSSES.register("safe-align")
@dataclass
class SafeAlignLoss:
    """Safe-Align: SimPO whose length-normalised reward weighs the shared-prefix tokens by alpha (1 is SimPO)."""

    alpha: float = 0.5
    beta: float = 2.0
    gamma: float = 0.5
    sft_weight: float = 1.0
    normaliser: str = "weighted"

    def __post_init__(self) -> None:
        if self.normaliser not in NORMALISERS:
            raise ValueError(f"unknown normaliser {self.normaliser!r}; known: {', '.join(NORMALISERS)}")
        self.alpha, self.beta, self.gamma = float(self.alpha), float(self.beta), float(self.gamma)
        self.sft_weight = float(self.sft_weight)

    def __call__(self, logps: torch.Tensor, completion_mask: torch.Tensor, prefix_mask: torch.Tensor,
                 n_pairs: int) -> Dict[str, torch.Tensor]:
        return safe_align_loss(logps, completion_mask, prefix_mask, n_pairs, self.alpha, self.beta, self.gamma,
                               self.sft_weight, self.normaliser)


def alpha_dpo_loss(
    policy_logps: torch.Tensor,
    ref_logps: torch.Tensor,
    completion_mask: torch.Tensor,
    prefix_mask: torch.Tensor,
    n_pairs: int,
    alpha: float,
    beta: float,
) -> torch.Tensor:
    """The alpha-weighted DPO of the paper's appendix C.3, per pair:
    ``-log sigmoid(beta * (h(y_w) - h(y_l)))`` with ``h(y) = sum_t w_t (log pi(y_t) - log pi_ref(y_t))``, w = alpha on
    the shared-prefix tokens and 1 elsewhere.

    **It is DPO for every alpha.** The k shared actions are the same tokens after the same context in y_w and y_l,
    so each prefix token has the same log-ratio in both and the weighted prefix terms cancel in h(y_w) - h(y_l).
    Only a length-normalised, reference-free reward (Safe-Align) lets alpha act: there the prefix sums are divided
    by different denominators. Kept for that demonstration (``tests/align/test_losses.py``), not as a method."""
    zero = torch.zeros((), dtype=policy_logps.dtype, device=policy_logps.device)
    w = torch.where(prefix_mask & completion_mask, torch.full_like(policy_logps, alpha), torch.ones_like(policy_logps))
    h = torch.where(completion_mask, w * (policy_logps - ref_logps), zero).sum(-1)
    return -F.logsigmoid(beta * (h[:n_pairs] - h[n_pairs:]))
