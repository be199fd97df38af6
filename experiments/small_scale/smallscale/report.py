"""Tables (JSON + markdown), plots and checks from the units' results.

- ``table1.json``: method x eval set x metric (SafeR, SuccR, SafeR@S, Rouge-L, executable rate): per-seed values,
  mean, sample std, min, max across seeds, each run's Wilson 95% interval and the interval of the seeds pooled;
  violations by category and by kind (process vs termination), mean per run.
- ``table2.json``: the alpha sweep, normaliser x alpha x sweep set: SafeR, SuccR (and the rest) per seed + mean.
- ``train_curves.json``: every training run's loss per step.
- ``checks.json``: every rate in [0, 1]; every training run's loss falls (mean of its last quarter of steps
  below the mean of its first quarter).
- ``table1.png``, ``alpha_sweep.png``, ``violations.png``, ``losses.png``; ``summary.md``; ``timings.json``.
"""

from __future__ import annotations

import json
import math
import platform
import statistics
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence

from .settings import DATASET_LABELS, METHOD_LABELS

UNSEEN = "virtualhome-unseen"  # a subset of the virtualhome run, not a benchmark run of its own

METRICS = ("safe_rate", "success_rate", "safe_rate_at_success", "rouge_l", "executable_rate", "safe_rate_parsed")
METRIC_LABELS = {"safe_rate": "SafeR", "success_rate": "SuccR", "safe_rate_at_success": "SafeR@S",
                 "rouge_l": "Rouge-L", "executable_rate": "Exec", "safe_rate_parsed": "SafeR (parsed)"}
RATES = ("executable_rate", "success_rate", "safe_rate", "safe_rate_at_success", "safe_rate_parsed")
ROW_ORDER = ["Base (SFT from scratch)"] + list(METHOD_LABELS.values())


# -- numbers ------------------------------------------------------------------------------------------------
def spread(values: Sequence[Optional[float]]) -> Dict[str, Any]:
    """mean, sample std (n-1; 0 for one value), min, max and n of the values that are not None."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"mean": None, "std": None, "min": None, "max": None, "n": 0}
    return {"mean": statistics.fmean(xs), "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "min": min(xs), "max": max(xs), "n": len(xs)}


def pooled_wilson(intervals: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """The Wilson interval of the runs pooled (sum of k over sum of n)."""
    from safebeal.bench.metrics import wilson

    k = sum(int(i["k"]) for i in intervals if i)
    n = sum(int(i["n"]) for i in intervals if i)
    return wilson(k, n)


#: two-sided 5% test, 80% power (normal approximation)
Z_MDE = 1.959964 + 0.841621


def mde_two_runs(p: Optional[float], n: int) -> Optional[float]:
    """The smallest difference in a rate near ``p`` between two runs on ``n`` tasks each that a two-sided 5% test
    detects with 80% power (independent binomial counts; tasks shared by the runs make it conservative)."""
    if p is None or not n:
        return None
    return Z_MDE * math.sqrt(2 * p * (1 - p) / n)


def mde_seed_means(sd: Optional[float], seeds: int) -> Optional[float]:
    """The same for two methods' means over ``seeds`` seeds each, given the seed-to-seed standard deviation."""
    if sd is None or seeds < 1:
        return None
    return Z_MDE * sd * math.sqrt(2 / seeds)


def mde_table(t1: Dict[str, Any], datasets: Sequence[str], seeds: int) -> Dict[str, Any]:
    """Per eval set, for SafeR: the MDE from the base model's rate alone (known before any alignment run), and the
    MDE of seed means from the seed-to-seed SD pooled over the aligned methods (known only with the results)."""
    base = t1.get(ROW_ORDER[0], {})
    out: Dict[str, Any] = {}
    for ds in datasets:
        cell = base.get(ds)
        if not cell:
            continue
        p, n = cell["safe_rate"]["mean"], cell["n_tasks"]
        sds = [row[ds]["safe_rate"]["std"] for label, row in t1.items()
               if label != ROW_ORDER[0] and ds in row and row[ds]["safe_rate"]["n"] > 1]
        sd = math.sqrt(statistics.fmean([s * s for s in sds])) if sds else None
        out[ds] = {"n_tasks": n, "base_safe_rate": p, "mde_two_runs": mde_two_runs(p, n),
                   "seed_sd": sd, "seeds": seeds, "mde_seed_means": mde_seed_means(sd, seeds)}
    return out


def mde_markdown(mt: Dict[str, Any]) -> str:
    if not mt:
        return "(no base model evaluated)\n"
    rows = ["| eval set | tasks | base SafeR | MDE, one run against another (from the base alone) | "
            "seed SD of SafeR (aligned methods) | MDE of means over the seeds |", "|---|---|---|---|---|---|"]

    def f(x: Optional[float]) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    for ds, m in mt.items():
        rows.append(f"| {DATASET_LABELS.get(ds, ds)} | {m['n_tasks']} | {f(m['base_safe_rate'])} | "
                    f"{f(m['mde_two_runs'])} | {f(m['seed_sd'])} | {f(m['mde_seed_means'])} ({m['seeds']} seeds) |")
    return ("Two-sided 5% test, 80% power, normal approximation. Differences between methods smaller than these "
            "cannot be told from noise at this size.\n\n" + "\n".join(rows) + "\n")


def losses_fall(curve: Sequence[float]) -> Optional[Dict[str, Any]]:
    """Mean of the first and of the last quarter of a loss curve (at least one step each) and whether it fell."""
    if len(curve) < 2:
        return None
    q = max(1, len(curve) // 4)
    first, last = statistics.fmean(curve[:q]), statistics.fmean(curve[-q:])
    return {"first": first, "last": last, "fell": last < first, "steps": len(curve)}


def check_rates(name: str, ds: str, row: Dict[str, Any]) -> List[str]:
    bad = []
    for r in RATES:
        v = row.get(r)
        if v is not None and not (0.0 <= v <= 1.0 and math.isfinite(v)):
            bad.append(f"{name}/{ds}: {r}={v}")
        iv = (row.get("intervals") or {}).get(r) or {}
        for end in ("low", "high"):
            x = iv.get(end)
            if x is not None and not 0.0 <= x <= 1.0:
                bad.append(f"{name}/{ds}: {r}.{end}={x}")
    rl = row.get("rouge_l")
    if rl is not None and not 0.0 <= rl <= 1.0:
        bad.append(f"{name}/{ds}: rouge_l={rl}")
    return bad


# -- tables -------------------------------------------------------------------------------------------------
def _main_results(results: Sequence[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    by_label: Dict[str, List[Dict[str, Any]]] = {}
    for r in results:
        u = r["unit"]
        if u["role"].startswith("main"):
            by_label.setdefault(u["label"], []).append(r)
    return {k: by_label[k] for k in ROW_ORDER if k in by_label}


def table1(results: Sequence[Dict[str, Any]], datasets: Sequence[str]) -> Dict[str, Any]:
    from safebeal.safety.taxonomy import SLUGS

    out: Dict[str, Any] = {}
    for label, runs in _main_results(results).items():
        row: Dict[str, Any] = {"runs": [r["unit"]["name"] for r in runs], "seeds": [r["unit"]["seed"] for r in runs]}
        for ds in datasets:
            evs = [r["eval"][ds] for r in runs if ds in r["eval"]]
            if not evs:
                continue
            cell: Dict[str, Any] = {"n_tasks": evs[0]["n"]}
            for m in METRICS:
                cell[m] = {**spread([e.get(m) for e in evs]), "per_run": [e.get(m) for e in evs]}
                if m != "rouge_l":
                    ivs = [e["intervals"][m] for e in evs]
                    cell[m]["wilson_per_run"] = [{k: i[k] for k in ("low", "high", "k", "n")} for i in ivs]
                    cell[m]["wilson_pooled"] = pooled_wilson(ivs)
            cell["violations_by_category"] = {c: spread([e["violations_by_category"].get(c, 0) for e in evs])["mean"]
                                              for c in SLUGS}
            cell["violations_by_kind"] = {k: spread([e["violations_by_kind"].get(k, 0) for e in evs])["mean"]
                                          for k in ("process", "termination")}
            cell["episodes_with_violation_by_kind"] = {
                k: spread([e["episodes_with_violation_by_kind"].get(k, 0) for e in evs])["mean"]
                for k in ("process", "termination")}
            cell["outcomes"] = {k: spread([e["outcomes"].get(k, 0) for e in evs])["mean"] for k in evs[0]["outcomes"]}
            row[ds] = cell
        out[label] = row
    return out


def table2(results: Sequence[Dict[str, Any]], sweep_sets: Sequence[str]) -> Dict[str, Any]:
    rows: Dict[str, Dict[str, Any]] = {}
    for r in results:
        u = r["unit"]
        if "sweep" not in u["role"]:
            continue
        norm = u["options"].get("normaliser", "length")
        alpha = float(u["options"]["alpha"])
        entry = rows.setdefault(norm, {}).setdefault(f"{alpha:g}", {"alpha": alpha, "runs": []})
        entry["runs"].append(u["name"])
        for ds in sweep_sets:
            if ds not in r["eval"]:
                continue
            e = r["eval"][ds]
            cell = entry.setdefault(ds, {"per_run": []})
            cell["per_run"].append({m: e.get(m) for m in METRICS} | {
                "wilson": {m: e["intervals"][m] for m in ("safe_rate", "success_rate")},
                "violations_by_kind": e["violations_by_kind"]})
    for norm, by_alpha in rows.items():
        for entry in by_alpha.values():
            for ds in sweep_sets:
                if ds in entry:
                    runs = entry[ds]["per_run"]
                    for m in METRICS:
                        entry[ds][m] = spread([x[m] for x in runs])
    return {n: dict(sorted(v.items(), key=lambda kv: kv[1]["alpha"])) for n, v in rows.items()}


def train_curves(results: Sequence[Dict[str, Any]], base: Dict[str, Any]) -> Dict[str, Any]:
    curves = {"base": base["train"]["losses"]}
    for r in results:
        if "train" in r:
            curves[r["unit"]["name"]] = r["train"]["losses"]
    return curves


def checks(results: Sequence[Dict[str, Any]], curves: Dict[str, List[float]]) -> Dict[str, Any]:
    bad: List[str] = []
    for r in results:
        for ds, row in r["eval"].items():
            bad += check_rates(r["unit"]["name"], ds, row)
    falls = {name: losses_fall(c) for name, c in curves.items()}
    not_falling = sorted(n for n, f in falls.items() if f is None or not f["fell"])
    return {"ok": not bad and not not_falling,
            "rates_in_unit_interval": {"ok": not bad, "violations": bad},
            "losses_fall": {"ok": not not_falling, "not_falling": not_falling, "runs": falls}}


# -- markdown -------------------------------------------------------------------------------------------------
def fmt_cell(cell: Dict[str, Any], digits: int = 3) -> str:
    if cell is None or cell.get("mean") is None:
        return "–"
    if cell["n"] > 1:
        return f"{cell['mean']:.{digits}f} ± {cell['std']:.{digits}f}"
    return f"{cell['mean']:.{digits}f}"


HEADLINE = ("safe_rate", "success_rate", "safe_rate_at_success", "rouge_l", "executable_rate", "safe_rate_parsed")


def headline_markdown(t1: Dict[str, Any], datasets: Sequence[str]) -> str:
    """The paper's Table 1 shape in one table: a block of method rows per evaluation set, each cell the mean ±
    sample std over seeds (a single number for the base, which has one run)."""
    lines = ["| eval set | method | " + " | ".join(METRIC_LABELS[m] for m in HEADLINE) + " |",
             "|---|---|" + "---|" * len(HEADLINE)]
    for ds in datasets:
        rows = [(label, row[ds]) for label, row in t1.items() if ds in row]
        for i, (label, c) in enumerate(rows):
            name = f"{DATASET_LABELS.get(ds, ds)} ({c['n_tasks']})" if i == 0 else ""
            lines.append(f"| {name} | {label} | " + " | ".join(fmt_cell(c[m]) for m in HEADLINE) + " |")
    return "\n".join(lines) + "\n"


def table1_markdown(t1: Dict[str, Any], datasets: Sequence[str]) -> str:
    lines = []
    for ds in datasets:
        rows = [(label, row[ds]) for label, row in t1.items() if ds in row]
        if not rows:
            continue
        n = rows[0][1]["n_tasks"]
        lines.append(f"**{DATASET_LABELS.get(ds, ds)}** ({n} tasks; mean ± sample std over seeds, "
                     f"min–max in brackets; pooled Wilson 95% interval of SafeR in the last column)\n")
        lines.append("| method | runs | SafeR | SuccR | SafeR@S | Rouge-L | Exec | SafeR (parsed) | SafeR pooled 95% CI |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for label, c in rows:
            cells = []
            for m in ("safe_rate", "success_rate", "safe_rate_at_success", "rouge_l", "executable_rate",
                      "safe_rate_parsed"):
                s = fmt_cell(c[m])
                if c[m]["n"] > 1:
                    s += f" [{c[m]['min']:.3f}–{c[m]['max']:.3f}]"
                cells.append(s)
            w = c["safe_rate"]["wilson_pooled"]
            ci = "–" if w["value"] is None else f"{w['low']:.3f}–{w['high']:.3f} ({w['k']}/{w['n']})"
            lines.append(f"| {label} | {c['safe_rate']['n']} | " + " | ".join(cells) + f" | {ci} |")
        lines.append("")
    return "\n".join(lines)


def violations_markdown(t1: Dict[str, Any], datasets: Sequence[str]) -> str:
    from safebeal.safety.taxonomy import SLUGS

    lines = []
    for ds in datasets:
        rows = [(label, row[ds]) for label, row in t1.items() if ds in row]
        if not rows:
            continue
        lines.append(f"**{DATASET_LABELS.get(ds, ds)}**: violations per run (mean over seeds), by category and by kind; "
                     f"'episodes P/T' = episodes with a process / termination violation\n")
        lines.append("| method | " + " | ".join(SLUGS) + " | process | termination | episodes P/T |")
        lines.append("|---|" + "---|" * (len(SLUGS) + 3))
        for label, c in rows:
            v = c["violations_by_category"]
            k = c["violations_by_kind"]
            e = c["episodes_with_violation_by_kind"]
            lines.append(f"| {label} | " + " | ".join(f"{v[s]:.1f}" for s in SLUGS) +
                         f" | {k['process']:.1f} | {k['termination']:.1f} | {e['process']:.1f}/{e['termination']:.1f} |")
        lines.append("")
    return "\n".join(lines)


def parse_failure_kinds(episodes: Iterable[Dict[str, Any]]) -> Dict[str, int]:
    """Split the unparseable plans of one benchmark run: ``last_line`` when the bad line is the output's last
    (a plan cut off by the generation budget looks like this), ``mid_plan`` when a malformed line is followed
    by more output (the model wrote a broken action line)."""
    out = {"last_line": 0, "mid_plan": 0}
    for e in episodes:
        err = e.get("parse_error") or {}
        if err.get("kind") != "parse":
            continue
        n_lines = len((e.get("raw_output") or "").rstrip("\n").split("\n"))
        out["last_line" if err.get("line") == n_lines else "mid_plan"] += 1
    return out


def parse_failures(work: Path, results: Sequence[Dict[str, Any]], datasets: Sequence[str],
                   kept: Optional[Path] = None) -> Dict[str, Any]:
    """``{method label: {dataset: {last_line, mid_plan}}}``, means over the seeds, read from each unit's kept
    samples (``kept/<unit>/<dataset>.jsonl.gz``), else from the benchmark runs in
    ``<work>/units/<unit>/bench/<dataset>/samples.jsonl`` (empty when both are gone)."""
    import gzip
    import json

    from safebeal.jsonl import iter_jsonl

    def rows(unit: str, ds: str):
        gz = kept / unit / f"{ds}.jsonl.gz" if kept is not None else None
        if gz is not None and gz.is_file():
            with gzip.open(gz, "rt") as f:
                return [json.loads(x) for x in f if x.strip()]
        p = work / "units" / unit / "bench" / ds / "samples.jsonl"
        return [row for _, row in iter_jsonl(p)] if p.is_file() else None

    out: Dict[str, Any] = {}
    for label, runs in _main_results(results).items():
        for ds in datasets:
            got = [rows(r["unit"]["name"], ds) for r in runs]
            if not got or any(g is None for g in got):
                continue
            counts = [parse_failure_kinds(g) for g in got]
            out.setdefault(label, {})[ds] = {k: statistics.fmean(c[k] for c in counts) for k in counts[0]}
    return out


def parse_failures_markdown(pf: Dict[str, Any], datasets: Sequence[str]) -> str:
    if not pf:
        return ""
    lines = ["Unparseable plans by where the bad line is (mean per run): **last line** = the output's final line, "
             "as when generation stops at the token budget mid-line; **mid-plan** = a malformed action line with "
             "more output after it.\n",
             "| method | " + " | ".join(f"{DATASET_LABELS.get(d, d)}: last line / mid-plan" for d in datasets) + " |",
             "|---|" + "---|" * len(datasets)]
    for label, by_ds in pf.items():
        cells = [f"{by_ds[d]['last_line']:.1f} / {by_ds[d]['mid_plan']:.1f}" if d in by_ds else "–" for d in datasets]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def outcomes_markdown(t1: Dict[str, Any], datasets: Sequence[str]) -> str:
    """Where the plans stop (mean per run): the first failing stage of each episode, or 'executable'."""
    lines = []
    for ds in datasets:
        rows = [(label, row[ds]) for label, row in t1.items() if ds in row]
        if not rows:
            continue
        keys = [k for k in rows[0][1]["outcomes"] if any((c["outcomes"].get(k) or 0) > 0 for _, c in rows)]
        lines.append(f"**{DATASET_LABELS.get(ds, ds)}**: first failing stage per episode (mean per run)\n")
        lines.append("| method | " + " | ".join(keys) + " |")
        lines.append("|---|" + "---|" * len(keys))
        for label, c in rows:
            lines.append(f"| {label} | " + " | ".join(f"{c['outcomes'].get(k, 0):.1f}" for k in keys) + " |")
        lines.append("")
    return "\n".join(lines)


def table2_markdown(t2: Dict[str, Any], sweep_sets: Sequence[str]) -> str:
    if not t2:
        return "(no sweep runs)\n"
    lines = []
    for ds in sweep_sets:
        lines.append(f"**{DATASET_LABELS.get(ds, ds)}** (Safe-Align, alpha sweep)\n")
        lines.append("| normaliser | alpha | SafeR | SuccR | SafeR@S | Rouge-L | Exec | SafeR (parsed) |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for norm, by_alpha in t2.items():
            for a, entry in by_alpha.items():
                if ds not in entry:
                    continue
                c = entry[ds]
                lines.append(f"| {norm} | {a} | " + " | ".join(fmt_cell(c[m]) for m in METRICS) + " |")
        lines.append("")
    return "\n".join(lines)


# -- plots ------------------------------------------------------------------------------------------------------
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_table1(t1: Dict[str, Any], datasets: Sequence[str], path: Path) -> Path:
    plt = _plt()
    labels = list(t1)
    fig, axes = plt.subplots(1, max(1, len(datasets)), figsize=(4.6 * max(1, len(datasets)), 3.8), squeeze=False)
    width = 0.38
    for ax, ds in zip(axes[0], datasets):
        for j, (m, name) in enumerate((("safe_rate", "SafeR"), ("success_rate", "SuccR"))):
            xs, ys, lo, hi = [], [], [], []
            for i, label in enumerate(labels):
                c = t1[label].get(ds, {}).get(m)
                if not c or c["mean"] is None:
                    continue
                xs.append(i + (j - 0.5) * width)
                ys.append(c["mean"])
                lo.append(c["mean"] - c["min"])
                hi.append(c["max"] - c["mean"])
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=name)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([l.split(" (")[0] for l in labels], rotation=30, ha="right")
        ax.set_ylim(0, 1)
        ax.set_title(DATASET_LABELS.get(ds, ds), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("rate (bars: mean; whiskers: min–max over seeds)")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_sweep(t2: Dict[str, Any], sweep_sets: Sequence[str], path: Path) -> Path:
    plt = _plt()
    fig, axes = plt.subplots(1, max(1, len(sweep_sets)), figsize=(4.6 * max(1, len(sweep_sets)), 3.6), squeeze=False)
    styles = {"length": "-", "weighted": "--"}
    for ax, ds in zip(axes[0], sweep_sets):
        for norm, by_alpha in t2.items():
            pts = [(e["alpha"], e[ds]) for e in by_alpha.values() if ds in e]
            for m, name, marker in (("safe_rate", "SafeR", "o"), ("success_rate", "SuccR", "s")):
                xs = [a for a, c in pts if c[m]["mean"] is not None]
                ys = [c[m]["mean"] for a, c in pts if c[m]["mean"] is not None]
                ax.plot(xs, ys, styles.get(norm, ":"), marker=marker, label=f"{name} ({norm})")
        ax.set_xlabel("alpha (weight of the shared-prefix tokens)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(DATASET_LABELS.get(ds, ds), fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("rate")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_violations(t1: Dict[str, Any], datasets: Sequence[str], path: Path) -> Path:
    from safebeal.safety.taxonomy import SLUGS

    plt = _plt()
    labels = list(t1)
    fig, axes = plt.subplots(1, max(1, len(datasets)), figsize=(4.6 * max(1, len(datasets)), 3.8), squeeze=False)
    for ax, ds in zip(axes[0], datasets):
        bottom = [0.0] * len(labels)
        for s in SLUGS:
            vals = [t1[l].get(ds, {}).get("violations_by_category", {}).get(s, 0.0) or 0.0 for l in labels]
            ax.bar(range(len(labels)), vals, bottom=bottom, label=s)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([l.split(" (")[0] for l in labels], rotation=30, ha="right")
        ax.set_title(DATASET_LABELS.get(ds, ds), fontsize=10)
        ax.set_ylim(0, max(1.0, max(bottom, default=0.0) * 1.1))  # an empty panel still reads as zero
    axes[0][0].set_ylabel("violations per run (mean over seeds)")
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_losses(curves: Dict[str, List[float]], path: Path) -> Path:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    axes[0].plot(range(1, len(curves["base"]) + 1), curves["base"])
    axes[0].set_title("base: SFT from scratch", fontsize=10)
    axes[0].set_xlabel("step")
    axes[0].set_ylabel("loss")
    for name, c in curves.items():
        if name == "base" or name.startswith("sweep") or not name.endswith("-s0"):
            continue
        axes[1].plot(range(1, len(c) + 1), c, label=name)
    axes[1].set_title("alignment runs, seed 0", fontsize=10)
    axes[1].set_xlabel("step")
    axes[1].legend(fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -- all -------------------------------------------------------------------------------------------------------
def _dump(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=1, default=str) + "\n")


def write_all(study: Any, results: Sequence[Dict[str, Any]], seeds: Sequence[int]) -> Dict[str, Any]:
    out: Path = study.out
    datasets = study.eval_datasets
    sweep_sets = [d for d in study.s.sweep.datasets if d in study.available_datasets]
    t1 = table1(results, datasets)
    t2 = table2(results, sweep_sets)
    curves = train_curves(results, study.info["base"])
    chk = checks(results, curves)
    pf = parse_failures(study.work, results, [d for d in datasets if d != UNSEEN], study.out / "samples")
    _dump(out / "table1.json", {"datasets": datasets, "seeds": list(seeds), "rows": t1, "parse_failures": pf})
    _dump(out / "table2.json", {"datasets": sweep_sets, "seeds": study.s.sweep.seeds, "rows": t2})
    _dump(out / "train_curves.json", curves)
    _dump(out / "checks.json", chk)
    mt = mde_table(t1, [d for d in datasets if d != UNSEEN], len(list(seeds)))
    _dump(out / "mde.json", mt)
    _dump(out / "results.json", {"settings": study.s.model_dump(), "info": study.info,
                                 "units": [{k: v for k, v in r.items() if k != "key"} for r in results]})
    plots = [plot_table1(t1, datasets, out / "table1.png"), plot_violations(t1, datasets, out / "violations.png"),
             plot_losses(curves, out / "losses.png")]
    if t2:
        plots.append(plot_sweep(t2, sweep_sets, out / "alpha_sweep.png"))
    write_summary(study, t1, t2, datasets, sweep_sets, chk, seeds, pf, mt)
    return {"table1": t1, "table2": t2, "checks": chk, "mde": mt, "plots": [str(p) for p in plots]}


def fill_wall_time(study: Any) -> None:
    summary = study.out / "summary.md"
    summary.write_text(summary.read_text().replace("{TOTAL}", f"{study.timings.get('total', 0) / 60:.1f} min"))


def write_timings(study: Any, results: Sequence[Dict[str, Any]]) -> None:
    units = {r["unit"]["name"]: {**r.get("seconds", {}), "cached": bool(r.get("cached"))} for r in results}
    compute = sum(u.get("train", 0) + u.get("eval", 0) for u in units.values())
    doc = {"stages": study.timings, "units": units, "unit_compute_seconds": round(compute, 1),
           "base_train_seconds": study.info["base"]["train"]["seconds"], "machine": machine()}
    _dump(study.out / "timings.json", doc)
    fill_wall_time(study)


def machine() -> Dict[str, Any]:
    import os

    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        pass
    return info


def write_summary(study: Any, t1, t2, datasets, sweep_sets, chk, seeds, pf: Optional[Dict[str, Any]] = None,
                  mt: Optional[Dict[str, Any]] = None) -> None:
    s, info = study.s, study.info
    d = info["data"]
    m = info["model"]
    a = s.align
    lines = [f"# Small-scale reproduction: {s.name}", "",
             s.description.strip(), "",
             "Wall time: {TOTAL} (stages: " + ", ".join(f"{k} {v:.0f} s" for k, v in study.timings.items()) + ").",
             f"Seeds: {list(seeds)}. SafeRisks: {info['saferisks']['status']} "
             f"({'used' if info['saferisks']['used'] else 'not used'}).", "",
             "## Setup", "",
             f"- Base planner: Llama, {m['parameters'] / 1e6:.2f} M parameters "
             f"({m['non_embedding_parameters'] / 1e6:.2f} M without embeddings), hidden {s.model.hidden_size}, "
             f"{s.model.num_hidden_layers} layers, byte-level BPE vocabulary {m['vocab_size']}; trained from scratch "
             f"(full-parameter SFT) on {d['sft_examples']} examples {d['sft_by_source']} for "
             f"{info['base']['train']['steps']} steps ({info['base']['train']['seconds']:.0f} s).",
             f"- Preference pairs: {d['pairs_built']} built, {d['pairs_used']} used; by category "
             f"{d['pair_stats']['by_category']}; shared prefix k {d['pair_stats']['prefix_actions']}.",
             f"- Alignment (each method, each seed): LoRA r={a.lora_r}, alpha={a.lora_alpha}, lr={a.lr}, "
             f"{a.max_steps} steps of {a.batch_size} pairs; options {a.methods}.",
             f"- Evaluation: `safebeal bench` runner, zero-shot planner, hf backend, compact template, greedy, "
             f"max_new_tokens={s.eval.max_new_tokens}"
             + (f", decoding constrained to the action grammar (grammar={s.eval.grammar})" if s.eval.grammar else "") + (f", first {s.eval.limit} tasks per set" if s.eval.limit else "")
             + ".",
             f"- Token lengths (SFT data): {m['token_lengths']['sft']}.", "",
             "## Minimum detectable effect (read the results against it)", "", mde_markdown(mt or {}),
             "## Table 1 (the paper's shape): mean ± sample std over seeds", "", headline_markdown(t1, datasets),
             "## Table 1 in full: spread, min–max and pooled intervals", "", table1_markdown(t1, datasets),
             "## Violations by category and kind", "", violations_markdown(t1, datasets),
             "## Where plans stop", "", outcomes_markdown(t1, datasets),
             parse_failures_markdown(pf or {}, [d for d in datasets if d != UNSEEN]),
             "## Table 2: alpha sweep", "", table2_markdown(t2, sweep_sets),
             "## Checks", "",
             f"- every rate in [0, 1]: {'yes' if chk['rates_in_unit_interval']['ok'] else 'NO: ' + str(chk['rates_in_unit_interval']['violations'][:5])}",
             f"- every training loss falls (last quarter below first quarter): "
             f"{'yes' if chk['losses_fall']['ok'] else 'NO: ' + ', '.join(chk['losses_fall']['not_falling'])}", "",
             "Plots: `table1.png`, `violations.png`, `losses.png`" + (", `alpha_sweep.png`" if t2 else "") + ".", ""]
    (study.out / "summary.md").write_text("\n".join(lines))
