"""Study v2, part A (issue 17, item 5A): does Safe-Align's prefix weighting change what a model learns at the
decision step, on synthetic plans where the answer is known?

    OMP_NUM_THREADS=1 python experiments/study_v2_synthetic/study_v2_synthetic.py                 # the full study (see --help)
    OMP_NUM_THREADS=1 python experiments/study_v2_synthetic/study_v2_synthetic.py --smoke         # 2 seeds, sft + simpo, delta 0, toy size
    ... --estimate                                                            # also print the full study's wall time,
                                                                              # extrapolated from this run's step times

Templates, metric and methods are in ``synthetic_plans.py`` beside this script. Per length difference delta
(-2, 0, +4) and seed: a tiny Llama is trained from scratch on a mix of safe and unsafe plans (unsafe with probability
``--unsafe-rate``, so the base's P(unsafe) is known), then each method fine-tunes a copy of it on safe/unsafe
pairs of other prompts, all at the same learning rate, steps and batches. On ``--n-eval`` held-out prompts (no
prompt of the training data), the script reads the exact probabilities of the unsafe and of the safe decision
action from the model and reports P(unsafe) = p_u / (p_u + p_s) (the share of the decision's probability on the
unsafe action), the raw p_u, and the change in mean log-prob per token of the safe plan's shared prefix and
suffix ("likelihood elsewhere").

Before the results it prints the minimum detectable effect (two-sided 5%, power 80%) from the seed-to-seed
spread of the pilot: the base models and the SFT, DPO and SimPO runs, which run first (they are part of the
study). Two forms: unpaired (two methods' seed means: the largest pilot spread) and paired (every method of one
seed starts from the same base and sees the same batches, so a method is compared with SimPO on its per-seed
differences; the pilot's spread of differences is DPO - SimPO's, two preference methods). Results are flagged
against the paired MDE; the largest spread of differences among the preference methods is printed with the MDE
it implies, so the reader can see whether the pilot's spread held.

Output: the tables on stdout and every number (per seed, per k bucket, timings) in ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import statistics
import sys
import time
from dataclasses import asdict
from typing import Any, Dict, List

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # synthetic_plans.py, the study's pieces

ALL_METHODS = ["sft", "dpo", "simpo", "sa-length-0", "sa-length-0.5", "sa-length-1", "sa-weighted-0",
               "sa-weighted-0.5", "sa-weighted-1"]
K_BUCKETS = ((0, 4), (5, 10), (11, 20))


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, help="seeds per method (each seed: its own base, data and pairs)")
    ap.add_argument("--deltas", default="-2,0,4", help="length differences |unsafe| - |safe| in actions")
    ap.add_argument("--methods", default=",".join(ALL_METHODS), help="comma list; sft always runs (the pilot, with "
                                                                         "dpo and simpo when listed)")
    ap.add_argument("--n-train", type=int, default=4000, help="base-training examples")
    ap.add_argument("--n-pairs", type=int, default=2000, help="preference pairs")
    ap.add_argument("--n-eval", type=int, default=1000, help="held-out prompts")
    ap.add_argument("--unsafe-rate", type=float, default=0.6, help="share of unsafe plans in the base's data")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--base-steps", type=int, default=1000)
    ap.add_argument("--base-lr", type=float, default=3e-3)
    ap.add_argument("--base-batch-size", type=int, default=32)
    ap.add_argument("--align-steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=1e-4, help="the one learning rate of every method")
    ap.add_argument("--batch-size", type=int, default=16, help="pairs per alignment step")
    ap.add_argument("--sft-weight", type=float, default=1.0, help="NLL of the safe plan added to every preference "
                                                                  "method's loss (DPO included; 0: pure preference)")
    ap.add_argument("--smoke", action="store_true", help="2 seeds, sft + simpo, delta 0, toy sizes")
    ap.add_argument("--estimate", action="store_true", help="print the full study's wall time from this run's step times")
    ap.add_argument("--out", default="", help="write every number here (JSON)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.seeds, a.deltas, a.methods = 2, "0", "sft,simpo"
        a.n_train, a.n_pairs, a.n_eval, a.base_steps, a.align_steps = 1000, 400, 200, 150, 20
    try:
        a.deltas = [int(d) for d in a.deltas.split(",") if d.strip()]
        a.methods = [m.strip() for m in a.methods.split(",") if m.strip()]
        from synthetic_plans import DELTAS, method

        for d in a.deltas:
            if d not in DELTAS:
                raise ValueError(f"delta must be one of {DELTAS}, got {d}")
        for m in a.methods:
            method(m)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    if "sft" not in a.methods:
        a.methods = ["sft"] + a.methods
    if a.seeds < 2:
        print("error: --seeds must be >= 2 (the minimum detectable effect needs a seed-to-seed spread)", file=sys.stderr)
        sys.exit(2)
    return a


def summarise(ev: Dict[str, List[float]], examples) -> Dict[str, Any]:
    share = [u / (u + s) if u + s > 0 else math.nan for u, s in zip(ev["p_unsafe"], ev["p_safe"])]
    out: Dict[str, Any] = {
        "p_unsafe_share": statistics.fmean(share), "p_unsafe": statistics.fmean(ev["p_unsafe"]),
        "p_safe": statistics.fmean(ev["p_safe"]),
        "prefix_logp": statistics.fmean([x for x in ev["prefix_logp"] if not math.isnan(x)]),
        "suffix_logp": statistics.fmean(ev["suffix_logp"]),
        "share_prompt_sd": statistics.stdev(share),
    }
    for lo, hi in K_BUCKETS:
        vals = [v for v, e in zip(share, examples) if lo <= e.k <= hi]
        out[f"share_k{lo}-{hi}"] = statistics.fmean(vals) if vals else math.nan
    return out


def held_out(n: int, delta: int, train_prompts: set) -> list:
    from synthetic_plans import make_examples

    out, round_ = [], 0
    while len(out) < n:
        out += [e for e in make_examples(4 * n, f"eval{round_}", delta) if (e.family, e.listed) not in train_prompts]
        round_ += 1
    return out[:n]


def run(a: argparse.Namespace) -> Dict[str, Any]:
    import torch

    from synthetic_plans import (Hyper, Vocab, align, decision_probs, make_examples, make_model, mean_sd,
                                          method, min_detectable_effect, paired_min_detectable_effect, train_base)

    torch.set_num_threads(1)
    vocab = Vocab()
    hp = Hyper(lr=a.lr, steps=a.align_steps, batch_size=a.batch_size, sft_weight=a.sft_weight)
    doc: Dict[str, Any] = {"config": {k: v for k, v in vars(a).items()}, "hyper": asdict(hp), "runs": [],
                           "timings": {"base_step": [], "align_step": {}, "eval_example": []},
                           "cpu_timings": {"base_step": [], "align_step": {}, "eval_example": []}}
    t_start = time.perf_counter()
    bases: Dict[tuple, Any] = {}
    data: Dict[tuple, Any] = {}
    evals: Dict[int, list] = {}

    def record(delta: int, seed: int, name: str, model: Any) -> Dict[str, Any]:
        t, c = time.perf_counter(), time.process_time()
        ev = decision_probs(model, vocab, evals[delta])
        doc["timings"]["eval_example"].append((time.perf_counter() - t) / len(evals[delta]))
        doc["cpu_timings"]["eval_example"].append((time.process_time() - c) / len(evals[delta]))
        row = {"delta": delta, "seed": seed, "method": name, **summarise(ev, evals[delta])}
        doc["runs"].append(row)
        return row

    def run_method(delta: int, seed: int, name: str) -> None:
        m = method(name)
        model = copy.deepcopy(bases[(delta, seed)])
        ref = bases[(delta, seed)] if m.kind == "dpo" else None
        t, c = time.perf_counter(), time.process_time()
        align(model, ref, vocab, data[(delta, seed)][1], m, hp, seed)
        doc["timings"]["align_step"].setdefault(m.kind, []).append((time.perf_counter() - t) / hp.steps)
        doc["cpu_timings"]["align_step"].setdefault(m.kind, []).append((time.process_time() - c) / hp.steps)
        record(delta, seed, name, model)

    pilot = [n for n in ("sft", "dpo", "simpo") if n in a.methods]
    pair = ("dpo", "simpo") if "dpo" in pilot and "simpo" in pilot else ("sft", "simpo" if "simpo" in pilot else "base")
    # -- pilot: every base, SFT and SimPO run, then the minimum detectable effect ------------------------------
    print(f"study v2 (A): deltas {a.deltas}, {a.seeds} seeds, methods {', '.join(a.methods)}; base: {a.n_train} "
          f"examples, unsafe rate {a.unsafe_rate}, {a.base_steps} steps; alignment: {a.n_pairs} pairs, "
          f"{a.align_steps} steps of {a.batch_size}, lr {a.lr}; {a.n_eval} held-out prompts", flush=True)
    for delta in a.deltas:
        for seed in range(a.seeds):
            train = make_examples(a.n_train, f"base{seed}", delta)
            pairs = make_examples(a.n_pairs, f"pairs{seed}", delta)
            data[(delta, seed)] = (train, pairs)
        seen = {(e.family, e.listed) for (d, _), (tr, pr) in data.items() if d == delta for e in tr + pr}
        evals[delta] = held_out(a.n_eval, delta, seen)
        for seed in range(a.seeds):
            model = make_model(vocab, a.hidden, a.layers, seed=seed)
            t, c = time.perf_counter(), time.process_time()
            losses = train_base(model, vocab, data[(delta, seed)][0], a.unsafe_rate, a.base_steps, a.base_batch_size,
                                a.base_lr, seed)
            doc["timings"]["base_step"].append((time.perf_counter() - t) / a.base_steps)
            doc["cpu_timings"]["base_step"].append((time.process_time() - c) / a.base_steps)
            bases[(delta, seed)] = model
            row = record(delta, seed, "base", model)
            row["base_final_loss"] = statistics.fmean(losses[-20:])
            for name in pilot:
                run_method(delta, seed, name)
    ks = sorted(e.k for d in a.deltas for e in evals[d])
    print(f"held-out prompts: k from {ks[0]} to {ks[-1]} (prompts seen in training excluded; median k {ks[len(ks) // 2]})")
    mde: Dict[int, Dict[str, float]] = {}
    print("\nminimum detectable effect on P(unsafe) (two-sided 5%, power 80%, "
          f"{a.seeds} seeds), from the pilot's seed-to-seed spread:")
    names = ["base"] + pilot
    print("| delta | " + " | ".join(f"sd {n}" for n in names) + f" | MDE unpaired | sd of {pair[0]} - {pair[1]} "
          "| MDE paired | evaluation floor (prompt sd / sqrt(n)) |")
    print("|---" * (len(names) + 5) + "|")
    for delta in a.deltas:
        vals = {n: seed_values(doc["runs"], delta, n) for n in names}
        sd = {n: mean_sd(list(v.values()))[1] for n, v in vals.items()}
        sd_diff = mean_sd([vals[pair[0]][s] - vals[pair[1]][s] for s in vals[pair[0]]])[1]
        floor = statistics.fmean(r["share_prompt_sd"] for r in doc["runs"] if r["delta"] == delta) / math.sqrt(a.n_eval)
        mde[delta] = {**{f"sd_{n}": v for n, v in sd.items()}, "eval_floor": floor, "sd_diff_pilot": sd_diff,
                      "mde": min_detectable_effect(max(sd.values()), a.seeds),
                      "mde_paired": paired_min_detectable_effect(sd_diff, a.seeds)}
        print(f"| {delta:+d} | " + " | ".join(f"{sd[n]:.4f}" for n in names)
              + f" | {mde[delta]['mde']:.4f} | {sd_diff:.4f} | {mde[delta]['mde_paired']:.4f} | {floor:.4f} |",
              flush=True)
    doc["mde"] = {str(k): v for k, v in mde.items()}

    # -- the other methods ----------------------------------------------------------------------------------------
    for delta in a.deltas:
        for seed in range(a.seeds):
            for name in a.methods:
                if name not in pilot:
                    run_method(delta, seed, name)
    doc["wall_s"] = time.perf_counter() - t_start
    report(doc, a, mde)
    return doc


def seed_values(runs: List[Dict[str, Any]], delta: int, name: str, key: str = "p_unsafe_share") -> Dict[int, float]:
    return {r["seed"]: r[key] for r in runs if r["delta"] == delta and r["method"] == name}


def report(doc: Dict[str, Any], a: argparse.Namespace, mde: Dict[int, Dict[str, float]]) -> None:
    from synthetic_plans import mean_sd, paired_min_detectable_effect

    names = ["base"] + a.methods
    for delta in a.deltas:
        rows = [r for r in doc["runs"] if r["delta"] == delta]
        ref = "simpo" if "simpo" in a.methods else "sft"
        base = {r["seed"]: r for r in rows if r["method"] == "base"}
        ref_vals = seed_values(rows, delta, ref)
        print(f"\ndelta {delta:+d} (|unsafe| - |safe| = {delta} actions); MDE unpaired {mde[delta]['mde']:.4f}, "
              f"paired {mde[delta]['mde_paired']:.4f}")
        print(f"| method | P(unsafe) | sd | raw p_u | raw p_s | vs {ref} (paired mean) | sd of diff | > paired MDE | "
              "d prefix logp | d suffix logp | " + " | ".join(f"P(unsafe) k {lo}-{hi}" for lo, hi in K_BUCKETS) + " |")
        print("|---" * (10 + len(K_BUCKETS)) + "|")
        worst = -1.0
        for name in names:
            rs = [r for r in rows if r["method"] == name]
            if not rs:
                continue
            mu, sd = mean_sd([r["p_unsafe_share"] for r in rs])
            dpre = statistics.fmean(r["prefix_logp"] - base[r["seed"]]["prefix_logp"] for r in rs)
            dsuf = statistics.fmean(r["suffix_logp"] - base[r["seed"]]["suffix_logp"] for r in rs)
            diffs = [r["p_unsafe_share"] - ref_vals[r["seed"]] for r in rs]
            diff, sd_diff = mean_sd(diffs)
            if name not in (ref, "base", "sft"):
                worst = max(worst, sd_diff)
            flag = "-" if name in (ref, "base") else ("yes" if abs(diff) > mde[delta]["mde_paired"] else "no")
            buckets = " | ".join(f"{statistics.fmean(r[f'share_k{lo}-{hi}'] for r in rs):.3f}" for lo, hi in K_BUCKETS)
            print(f"| {name} | {mu:.4f} | {sd:.4f} | {statistics.fmean(r['p_unsafe'] for r in rs):.4f} | "
                  f"{statistics.fmean(r['p_safe'] for r in rs):.4f} | {diff:+.4f} | {sd_diff:.4f} | {flag} | "
                  f"{dpre:+.3f} | {dsuf:+.3f} | "
                  f"{buckets} |")
        if "simpo" in a.methods:
            for other in ("sa-length-0", "sa-length-0.5", "sa-length-1", "sa-weighted-1"):
                a_rows = {r["seed"]: r["p_unsafe_share"] for r in rows if r["method"] == other}
                s_rows = {r["seed"]: r["p_unsafe_share"] for r in rows if r["method"] == "simpo"}
                if a_rows:
                    gap = max(abs(a_rows[s] - s_rows[s]) for s in a_rows)
                    expect = "equal to SimPO by construction" if other.endswith("-1") or delta == 0 else \
                        "may differ (unequal lengths)"
                    print(f"check: {other} vs simpo, max per-seed |diff| in P(unsafe) = {gap:.2e} ({expect})")
        if worst >= 0:
            print(f"largest sd of a preference method's per-seed difference from {ref}: {worst:.4f}; the paired MDE "
                  f"at that spread is {paired_min_detectable_effect(worst, a.seeds):.4f} "
                  f"(pilot: {mde[delta]['mde_paired']:.4f})")
    print(f"\nwall time {doc['wall_s']:.0f} s")


def estimate(doc: Dict[str, Any], key: str = "timings") -> Dict[str, float]:
    """The full study's time (defaults of this script) from this run's measured per-step times: wall time at this
    run's load (``timings``), or CPU time (``cpu_timings``: the wall time on an otherwise idle core, one thread)."""
    full = parse_args([])
    t = doc[key]
    base_step = statistics.median(t["base_step"])
    per_kind = {k: statistics.median(v) for k, v in t["align_step"].items()}
    pref = per_kind.get("safe-align", per_kind["sft"])
    kind_of = {"sft": "sft", "dpo": "dpo"}
    eval_ex = statistics.median(t["eval_example"])
    scale_base = full.base_batch_size / doc["config"]["base_batch_size"]
    scale_align = full.batch_size / doc["config"]["batch_size"]
    per_unit = full.base_steps * base_step * scale_base + full.n_eval * eval_ex * (1 + len(full.methods))
    for name in full.methods:
        kind = kind_of.get(name, "safe-align")
        step = per_kind.get(kind, pref * (1.5 if kind == "dpo" else 1.0))
        per_unit += full.align_steps * step * scale_align
    units = len(full.deltas) * full.seeds
    return {"per_delta_seed_s": per_unit, "units": units, "total_s": per_unit * units,
            "base_step_s": base_step, "align_step_s": per_kind, "eval_example_s": eval_ex}


def main(argv=None) -> int:
    a = parse_args(argv)
    doc = run(a)
    if a.estimate:
        full = parse_args([])
        for key, what in (("timings", "wall time on this machine at this run's load"),
                          ("cpu_timings", "CPU time, the wall time on an idle core")):
            est = estimate(doc, key)
            doc[f"estimate_full_{key}"] = est
            print(f"estimated full study (defaults: {len(full.deltas)} deltas x {full.seeds} seeds x "
                  f"{len(full.methods)} methods), {what}: {est['total_s'] / 60:.0f} min (base step "
                  f"{est['base_step_s'] * 1000:.0f} ms, alignment steps "
                  + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in est["align_step_s"].items())
                  + f", evaluation {est['eval_example_s'] * 1000:.2f} ms a prompt)")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(doc, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
