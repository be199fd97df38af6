"""Optimizer-step time of Safe-Align vs TRL SimPO vs TRL DPO vs TRL SFT on the same model, pairs and settings,
measured in one run, interleaved round by round; the median of each method's step times is reported, with its
ratio to SimPO.

    OMP_NUM_THREADS=1 python benchmarks/bench_align.py [--rounds 7] [--batch-size 2] [--data PAIRS]
        [--hidden 128 --layers 2 --vocab 8000] [--device cpu|cuda] [--bf16]

Model: a random-initialised Llama (sizes from the flags) with a byte-level BPE tokenizer trained on the prompts,
saved and reloaded with from_pretrained; LoRA r=16 on all linear layers (the training default) for every method.
Pairs: --data (a `safebeal pairs build` output) or, by default, ActivityPrograms training tasks with the
benchmark prompt, chosen = the ground-truth plan, rejected = the plan without its last action (k = n - 1).
A step = the trainer's own ``training_step`` (forward + backward through its loss) + AdamW step, on a fixed
batch collated by that trainer's collator. ``safe-align (all logits)`` is Safe-Align with ``logits_to_keep`` off,
to show what computing logits only for completion positions saves.

    OMP_NUM_THREADS=1 python benchmarks/bench_align.py --alpha-effect [--steps 20] [--pairs 16]

trains Safe-Align for alpha in {0, 0.5, 1} with each normaliser (same model, pairs, seed) and reports, on the
training pairs after training: the mean log-prob per token of the shared prefix (its change from the initial
model), the gap between chosen and rejected in mean log-prob of the divergent tokens ("rest"), and SimPO's pair
accuracy (alpha=1 reward). If alpha mattered only through normalisation, rows of one normaliser would differ
only where the plans' lengths differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def synth_pairs(n: int):
    import safebeal.datasets.virtualhome  # noqa: F401 - registers the datasets
    from safebeal.align.data import Pair
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.prompts import build_messages

    pairs = []
    for t in DATASETS.create("activity-train").tasks():
        lines = [l for l in (t.reference or "").split("\n") if l.strip()]
        if len(lines) < 3:
            continue
        pairs.append(Pair(build_messages(t), "\n".join(lines), "\n".join(lines[:-1]), len(lines) - 1))
        if len(pairs) == n:
            break
    return pairs


def build_model(root: Path, pairs, hidden: int, layers: int, vocab: int) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from safebeal.planners.backends import render_plain

    text = [render_plain(p.prompt) + p.chosen for p in pairs]
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(text, trainers.BpeTrainer(vocab_size=min(vocab, 4000), special_tokens=["<pad>", "<s>", "</s>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    tok.save_pretrained(root)
    torch.manual_seed(0)
    heads = max(1, hidden // 64)
    cfg = LlamaConfig(vocab_size=max(vocab, len(tok)), hidden_size=hidden, intermediate_size=int(hidden * 2.75),
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                      max_position_embeddings=4096, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(root)
    return root, sum(p.numel() for p in model.parameters())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--data", default=None)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--max-length", type=int, default=4096)
    ap.add_argument("--methods", default="safe-align,simpo,dpo,sft,safe-align-all-logits")
    ap.add_argument("--alpha-effect", action="store_true")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=2e-3)
    args = ap.parse_args()
    if args.alpha_effect:
        return alpha_effect(args)

    import torch

    if args.device == "cpu":
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    from transformers.utils import logging as hf_logging

    from safebeal.align.config import build_config
    from safebeal.align.data import load_pairs
    from safebeal.align.methods import build_trainer

    hf_logging.set_verbosity_error()
    pairs = load_pairs(args.data, "safe-align", args.pairs) if args.data else synth_pairs(args.pairs)
    tmp = Path(tempfile.mkdtemp(prefix="bench_align_"))
    model_dir, n_params = build_model(tmp / "model", pairs, args.hidden, args.layers, args.vocab)
    batch_pairs = pairs[: args.batch_size]

    trainers = {}
    for name in args.methods.split(","):
        method = "safe-align" if name.startswith("safe-align") else name
        over = {"model": str(model_dir), "data": str(tmp), "out": str(tmp / name), "progress": False,
                "batch_size": args.batch_size, "device": args.device, "max_steps": 10, "max_length": args.max_length}
        if args.bf16:
            over["bf16"] = True
        cfg = build_config(method, overrides=over)
        tr = build_trainer(cfg, batch_pairs)
        if name == "safe-align-all-logits":
            tr._keep_ok = False
        ds = tr.train_dataset
        batch = tr.data_collator([ds[i] for i in range(min(len(ds), args.batch_size))])
        batch = tr._prepare_inputs(batch)
        tr.create_optimizer_and_scheduler(num_training_steps=10)
        tr.current_gradient_accumulation_steps = 1  # set by train(); training_step divides the loss by it
        tr.model.train()
        trainers[name] = (tr, batch)

    def step(name: str) -> float:
        tr, batch = trainers[name]
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        tr.training_step(tr.model, batch)
        tr.optimizer.step()
        tr.optimizer.zero_grad(set_to_none=True)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    times = {n: [] for n in trainers}
    for r in range(args.warmup + args.rounds):
        order = list(trainers) if r % 2 == 0 else list(reversed(trainers))  # interleave, alternate order
        for name in order:
            dt = step(name)
            if r >= args.warmup:
                times[name].append(dt)

    sa_tr, sa_batch = next(v for k, v in trainers.items() if k.startswith("safe-align"))
    n_tokens = int(sa_batch["attention_mask"].sum())
    n_completion = int(sa_batch["completion_mask"].sum())
    simpo = statistics.median(times["simpo"]) if "simpo" in times else None
    print(f"model: random Llama hidden={args.hidden} layers={args.layers} vocab={args.vocab} "
          f"({n_params / 1e6:.1f}M params), LoRA r=16 all-linear; batch {args.batch_size} pairs; "
          f"device {args.device}{' bf16' if args.bf16 else ''}; OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; "
          f"{args.rounds} interleaved rounds")
    print(f"pairs: {'--data ' + args.data if args.data else 'synthetic (activity-train, drop last action)'}; "
          f"{n_tokens} tokens per preference step ({n_completion} of them completion tokens)")
    print("| method | median step (s) | min | max | vs SimPO |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        ratio = f"{med / simpo:.2f}x" if simpo else "-"
        print(f"| {name} | {med:.3f} | {min(ts):.3f} | {max(ts):.3f} | {ratio} |")


def pair_stats(trainer) -> dict:
    """Prefix mean log-prob, rest log-prob gap (chosen - rejected) and SimPO accuracy over the training pairs."""
    import torch

    prefix_lp, gaps, wins = [], [], []
    ds = trainer.train_dataset
    trainer.model.eval()
    with torch.no_grad():
        for i in range(0, len(ds), 4):
            batch = trainer._prepare_inputs(trainer.data_collator([ds[j] for j in range(i, min(len(ds), i + 4))]))
            logps, comp, pre = trainer.pair_logps(trainer.model, batch)
            n = batch["n_pairs"]
            zero = torch.zeros((), dtype=logps.dtype)
            rest = comp & ~pre
            mean_rest = torch.where(rest, logps, zero).sum(-1) / rest.sum(-1).clamp(min=1)
            mean_all = torch.where(comp, logps, zero).sum(-1) / comp.sum(-1).clamp(min=1)
            mean_pre = torch.where(pre, logps, zero).sum(-1) / pre.sum(-1).clamp(min=1)
            prefix_lp += mean_pre[:n].tolist()
            gaps += (mean_rest[:n] - mean_rest[n:]).tolist()
            wins += (mean_all[:n] > mean_all[n:]).float().tolist()
    trainer.model.train()
    k = len(gaps)
    return {"prefix_logp": sum(prefix_lp) / k, "rest_gap": sum(gaps) / k, "simpo_acc": sum(wins) / k}


def alpha_effect(args) -> None:
    from transformers import PrinterCallback
    from transformers.utils import logging as hf_logging

    from safebeal.align.config import build_config
    from safebeal.align.data import load_pairs
    from safebeal.align.methods import build_trainer

    hf_logging.set_verbosity_error()
    pairs = load_pairs(args.data, "safe-align", args.pairs) if args.data else synth_pairs(args.pairs)
    tmp = Path(tempfile.mkdtemp(prefix="bench_alpha_"))
    model_dir, n_params = build_model(tmp / "model", pairs, args.hidden, args.layers, args.vocab)
    print(f"random Llama hidden={args.hidden} layers={args.layers} vocab={args.vocab} ({n_params / 1e6:.1f}M), LoRA r=16; "
          f"{len(pairs)} pairs ({'--data ' + args.data if args.data else 'synthetic: drop last action'}); "
          f"{args.steps} steps, batch {args.batch_size}, lr {args.lr}")
    print("| normaliser | alpha | prefix logp (init -> trained) | rest gap (init -> trained) | SimPO acc (init -> trained) |")
    print("|---|---|---|---|---|")
    for normaliser in ("length", "weighted"):
        for alpha in (0.0, 0.5, 1.0):
            cfg = build_config("safe-align", overrides={
                "model": str(model_dir), "data": str(tmp), "out": str(tmp / f"{normaliser}-{alpha}"), "progress": False,
                "alpha": alpha, "normaliser": normaliser, "max_steps": args.steps, "batch_size": args.batch_size,
                "lr": args.lr, "max_length": args.max_length, "device": args.device})
            tr = build_trainer(cfg, pairs)
            tr.remove_callback(PrinterCallback)
            before = pair_stats(tr)
            tr.train()
            after = pair_stats(tr)
            print(f"| {normaliser} | {alpha} | {before['prefix_logp']:.3f} -> {after['prefix_logp']:.3f} | "
                  f"{before['rest_gap']:.3f} -> {after['rest_gap']:.3f} | "
                  f"{before['simpo_acc']:.2f} -> {after['simpo_acc']:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
