"""``safebeal train``: one command for every registered training method (also ``python -m safebeal.train``).

The ``--method`` choices, the command's help and its flags are read from the method registry
(:data:`safebeal.align.config.METHODS`) when the command is registered. Every field of every method's config
dataclass is a flag (``--lora-r 8``, ``--no-lora``, ``--alpha 0.3``);
a flag of another method is an error (``--alpha`` with ``--method dpo``). ``--config file.yaml`` sets the same
fields; flags win over the file. All input is checked before a model is loaded.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any, Callable, Dict, Optional

import typer

from safebeal.console import err_console
from safebeal.errors import SafebealError

_OWN = ("method", "config", "sweep", "eval_dataset", "eval_limit", "eval_planner", "eval_max_new_tokens")


def _defaults(name: str, methods: list) -> str:
    """'default: X', or per method where methods differ ('default: 5e-05; sft: 0.0002')."""
    from safebeal.align.config import config_class, field_map

    values = {m: field_map(config_class(m))[name].default for m in methods}
    shown = {m: ("required" if v == "" else "auto" if v is None else v) for m, v in values.items()}
    counts: Dict[Any, int] = {}
    for v in shown.values():
        counts[v] = counts.get(v, 0) + 1
    common = max(counts, key=lambda v: counts[v])
    if common == "required":
        return "required"
    extra = "".join(f"; {m}: {v}" for m, v in shown.items() if v != common)
    return f"default: {common}{extra}"


def _field_params() -> list:
    """One typer option per config field (union over methods), default None = not given."""
    from safebeal.align.config import METHODS, _base_type, all_fields, config_class, field_type

    params = []
    n_methods = len(METHODS.names())
    for name, (f, methods) in all_fields().items():
        tp, _ = _base_type(field_type(config_class(methods[0]), name))
        flag = "--" + name.replace("_", "-")
        decls = [f"{flag}/--no-{name.replace('_', '-')}"] if tp is bool else [flag]
        scope = "" if len(methods) == n_methods else f" Methods: {', '.join(methods)}."
        help_text = f"{f.metadata.get('help', '')}{scope} ({_defaults(name, methods)})"
        option = typer.Option(None, *decls, help=help_text, show_default=False,
                              rich_help_panel="Method options" if scope else "Training options")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=Optional[tp]))
    return params


def _own_params() -> list:
    from safebeal.align.config import method_choices

    P = inspect.Parameter
    kw = P.KEYWORD_ONLY
    return [
        P("method", kw, annotation=Optional[str], default=typer.Option(
            None, "--method", "-m", help=f"{method_choices()} (SFT on --sft-data, then the preference method from "
                 "the SFT model); or 'method:' in --config.")),
        P("config", kw, annotation=Optional[str], default=typer.Option(
            None, "--config", "-c", help="YAML file of options (same names as the flags); flags win.")),
        P("sweep", kw, annotation=Optional[str], default=typer.Option(
            None, "--sweep", help="Train one model per value, e.g. alpha=0,0.2,0.4,0.6,0.8,1.0; writes sweep.json and sweep.png.",
            rich_help_panel="Sweep")),
        P("eval_dataset", kw, annotation=str, default=typer.Option(
            "activity-test", "--eval-dataset", help="Benchmark dataset for each sweep model ('none': no evaluation).",
            rich_help_panel="Sweep")),
        P("eval_limit", kw, annotation=int, default=typer.Option(
            0, "--eval-limit", help="Evaluate each sweep model on the first N tasks (0: all).", rich_help_panel="Sweep")),
        P("eval_planner", kw, annotation=str, default=typer.Option(
            "zero-shot", "--eval-planner", help="Planner wrapping the trained model: zero-shot, few-shot or llm-planner.",
            rich_help_panel="Sweep")),
        P("eval_max_new_tokens", kw, annotation=int, default=typer.Option(
            256, "--eval-max-new-tokens", help="Generation budget per plan in the sweep evaluation.", rich_help_panel="Sweep")),
    ]


def _print_error(exc: Exception) -> None:
    from rich.text import Text

    from safebeal.console import one_line

    err_console.print(Text("error:", style="bold red") + Text(" " + one_line(exc)), highlight=False)


def _run(kwargs: Dict[str, Any]) -> None:
    from safebeal.align.config import ConfigError, build_config, is_chained, parse_sweep

    own = {k: kwargs.pop(k) for k in _OWN}
    cfg = build_config(own["method"], own["config"], kwargs)
    if own["sweep"] and is_chained(cfg.method):
        raise ConfigError(f"--sweep trains one method; for {cfg.method}, run the recipe once and sweep "
                          f"--method {cfg.preference_method} with --model <out>/sft")
    if is_chained(cfg.method):
        _run_recipe(cfg)
        return
    if own["sweep"]:
        from safebeal.align.sweep import EvalSettings, run_sweep

        param, values = parse_sweep(own["sweep"], cfg.method)
        dataset = None if own["eval_dataset"].lower() in ("", "none") else own["eval_dataset"]
        settings = EvalSettings(dataset, own["eval_limit"], own["eval_planner"], own["eval_max_new_tokens"])
        doc = run_sweep(cfg, param, values, settings)
        typer.echo(json.dumps([{k: v for k, v in r.items() if k != "out"} for r in doc["runs"]], indent=1))
        typer.echo(f"sweep: {cfg.out}/sweep.json, {cfg.out}/sweep.png")
        return
    from safebeal.align.methods import train

    result = train(cfg)
    if int(os.environ.get("RANK", "0")) != 0:  # under accelerate/torchrun only the main process reports
        return
    last = result.last_log
    shown = {k: round(v, 4) for k, v in last.items() if isinstance(v, float) and k in (
        "loss", "rewards/margins", "rewards/accuracies")}
    typer.echo(f"{cfg.method}: {result.steps} steps on {result.n_pairs} pairs in {result.seconds:.1f}s; last log {shown}")
    typer.echo(f"model: {result.out} (benchmark it with --planner zero-shot:backend=hf:model={result.out})")


def _run_recipe(cfg: Any) -> None:
    from safebeal.align.recipe import run_recipe

    result = run_recipe(cfg)
    if int(os.environ.get("RANK", "0")) != 0:
        return
    for stage in result.stages:
        shown = {k: round(v, 4) for k, v in stage.last_log.items() if isinstance(v, float) and k in (
            "loss", "rewards/margins", "rewards/accuracies")}
        typer.echo(f"{stage.method}: {stage.steps} steps on {stage.n_pairs} examples in {stage.seconds:.1f}s -> "
                   f"{stage.out}; last log {shown}")
    typer.echo(f"model: {result.out} (both stages recorded in {result.out}/recipe.json; benchmark it with "
               f"--planner zero-shot:backend=hf:model={result.out})")


def _train(**kwargs: Any) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        _run(kwargs)
    except SafebealError as exc:
        _print_error(exc)
        raise typer.Exit(2)


def _help() -> str:
    """The command's help: one line per registered method (from its registration)."""
    from safebeal.align.config import training_methods

    lines = "\n".join(f"- {m.name}: {m.help}" for m in training_methods() if m.preference is None)
    return ("Train a planner model on safety preference pairs (LoRA by default), or run the chained recipe "
            "sft+<method> (SFT, then preference training from the SFT model, in one run directory).\n\n"
            f"Methods:\n\n{lines}\n\n"
            "Example: safebeal train --method safe-align --model org/name --data pairs/ --out runs/sa --alpha 0.5")


def train_command() -> Callable[..., None]:
    """The ``train`` command as the method registry has it now: its flags, ``--method`` choices and help."""

    def train(**kwargs: Any) -> None:
        _train(**kwargs)

    train.__doc__ = _help()
    train.__signature__ = inspect.Signature(_own_params() + _field_params())  # type: ignore[attr-defined]
    train.__annotations__ = {p.name: p.annotation for p in train.__signature__.parameters.values()}  # type: ignore[attr-defined]
    return train


def register(app: typer.Typer) -> None:
    app.command("train", no_args_is_help=True)(train_command())


def standalone_app() -> typer.Typer:
    """The same command as its own program (``python -m safebeal.train``, ``accelerate launch -m safebeal.train``)."""
    app = typer.Typer(add_completion=False)
    app.command(no_args_is_help=True)(train_command())
    return app
