"""Hyper-parameter sweep (``--sweep alpha=0,0.2,...``): one trained model per value, each scored with the benchmark.

Layout: ``<out>/<param>_<value>/`` per model (a full training output, see ``methods.py``), its benchmark run in
``<out>/<param>_<value>/bench/``, and ``<out>/sweep.json`` + ``<out>/sweep.png`` (SafeR and SuccR against the value;
the final training loss and pair accuracy when no evaluation was asked for).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from safebeal.align.config import ConfigError, TrainConfig
from safebeal.align.data import Pair
from safebeal.align.preflight import check_out, preflight

Evaluator = Callable[..., Dict[str, Any]]


@dataclasses.dataclass
class EvalSettings:
    dataset: Optional[str] = "activity-test"  # None: no benchmark evaluation
    limit: int = 0
    planner: str = "zero-shot"
    max_new_tokens: int = 256
    batch_size: int = 8


def bench_evaluate(model_dir: str | Path, settings: EvalSettings) -> Dict[str, Any]:
    """Benchmark one trained model with ``safebeal.bench.runner.run_bench`` and return its summary row."""
    from safebeal.bench.runner import RunConfig, run_bench

    spec = (f"{settings.planner}:backend=hf:model={model_dir},max_new_tokens={settings.max_new_tokens},"
            f"batch_size={settings.batch_size}")
    summary = run_bench(RunConfig(planners=[spec], dataset=str(settings.dataset), out=str(Path(model_dir) / "bench"),
                                  limit=settings.limit, workers=1, overwrite=True))
    (label, row), = summary.items()
    return {"planner": label, **{k: row.get(k) for k in ("n", "executable_rate", "success_rate", "safe_rate",
                                                         "safe_rate_at_success")}}


def _train_metrics(result: Any) -> Dict[str, Any]:
    last = result.last_log
    return {"steps": result.steps, "train_loss": result.metrics.get("train_loss"), "last_loss": last.get("loss"),
            "pair_accuracy": last.get("rewards/accuracies"), "reward_margin": last.get("rewards/margins")}


def _value_dir(out: Path, param: str, value: Any) -> Path:
    return out / f"{param}_{value}"


def plot_sweep(records: Sequence[Dict[str, Any]], param: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r[param] for r in records]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    if all(r.get("eval") for r in records):
        ax.plot(xs, [r["eval"]["safe_rate"] for r in records], "o-", label="SafeR")
        ax.plot(xs, [r["eval"]["success_rate"] for r in records], "s-", label="SuccR")
        ax.set_ylabel("rate")
        ax.set_ylim(-0.02, 1.02)
    else:
        ax.plot(xs, [r["train"]["pair_accuracy"] for r in records], "o-", label="final pair accuracy")
        ax.plot(xs, [r["train"]["last_loss"] for r in records], "s-", label="final loss")
    ax.set_xlabel(param)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def run_sweep(cfg: TrainConfig, param: str, values: Sequence[Any], settings: Optional[EvalSettings] = None,
              evaluate: Evaluator = bench_evaluate, pairs: Optional[Sequence[Pair]] = None) -> Dict[str, Any]:
    """Train ``cfg`` once per value of ``param`` and evaluate each model; every value is checked first."""
    from safebeal.align.methods import train

    settings = settings or EvalSettings()
    out = Path(cfg.out)
    if "," in str(out.resolve()):
        raise ConfigError(f"--out {cfg.out!r}: a sweep directory may not contain ',' (it goes into planner specs)")
    configs = []
    for v in values:
        c = dataclasses.replace(cfg, **{param: v, "out": str(_value_dir(out, param, v))})
        c.validate()
        check_out(c.out, c.overwrite)
        configs.append(c)
    if pairs is None:
        pairs = preflight(dataclasses.replace(cfg, overwrite=True))
    out.mkdir(parents=True, exist_ok=True)
    records: List[Dict[str, Any]] = []
    doc = {"method": cfg.method, "param": param, "values": list(values),
           "eval": dataclasses.asdict(settings), "config": cfg.to_dict(), "runs": records}
    for v, c in zip(values, configs):
        result = train(c, pairs)
        rec: Dict[str, Any] = {param: v, "out": c.out, "train": _train_metrics(result)}
        if settings.dataset:
            rec["eval"] = evaluate(c.out, settings)
        records.append(rec)
        (out / "sweep.json").write_text(json.dumps(doc, indent=1))
    plot_sweep(records, param, out / "sweep.png")
    return doc
