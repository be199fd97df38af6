"""``safebeal pairs build|operators``: the Safe-Align preference-pair builder on the command line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from safebeal.console import console, fail as _fail
from safebeal.errors import SafebealError

pairs_app = typer.Typer(no_args_is_help=True, help="Safety preference pairs (safe plan vs unsafe plan) for Safe-Align.")


def _csv(text: Optional[str]) -> Optional[tuple]:
    if text is None:
        return None
    items = tuple(s.strip() for s in text.split(",") if s.strip())
    return items or None


@pairs_app.command("build")
def build(
    out: Path = typer.Option(Path("pairs"), "--out", "-o", help="Output folder: the Hugging Face dataset (save_to_disk), pairs.jsonl, stats.json."),
    sources: str = typer.Option("mutation,saferisks", "--sources", help="Comma-separated: mutation, saferisks, llm."),
    llm_backend: Optional[str] = typer.Option(None, "--llm-backend", help="Backend spec for the adversarial LLM source, e.g. openai:model=gpt-4o or mock:outputs=file.jsonl."),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seed gives the same pairs, whatever --workers."),
    limit: int = typer.Option(0, "--limit", help="Use only the first N safe plans of each origin (0 = all)."),
    operators: Optional[str] = typer.Option(None, "--operators", help="Comma-separated mutation operator specs (default: the on-task set; 'all' = every operator, detours included; see `safebeal pairs operators`)."),
    per_operator: int = typer.Option(1, "--per-operator", help="Pairs per operator and safe plan."),
    max_tries: int = typer.Option(4, "--max-tries", help="Candidates judged per operator and safe plan before giving up."),
    min_actions: int = typer.Option(3, "--min-actions", help="Plans shorter than this are dropped as trivial."),
    keep_prefix_pairs: bool = typer.Option(False, "--keep-prefix-pairs", help="Keep near-miss pairs where one plan is a prefix of the other (dropped by default)."),
    prompt_objects: str = typer.Option("task", "--prompt-objects", help="Objects the prompt lists: 'task' (the benchmark prompt's list) or 'chosen' (that plus the chosen plan's objects). Rejected plans may use listed objects only."),
    saferisks_mutations: bool = typer.Option(True, "--saferisks-mutations/--no-saferisks-mutations", help="Also apply the mutation operators to SafeRisks safe plans."),
    llm_per_plan: int = typer.Option(1, "--llm-per-plan", help="Adversarial prompts per safe plan (llm source)."),
    workers: int = typer.Option(0, "--workers", "-j", help="Processes (0 = one per CPU)."),
    rules: List[Path] = typer.Option([], "--rules", help="Extra rule file or folder for the detector (repeatable)."),
    objects: List[Path] = typer.Option([], "--objects", help="Extra object hazard file (repeatable)."),
    strict: bool = typer.Option(False, "--strict", help="Detector counts every hazard present at the end, not only those the plan caused."),
    goal_both: bool = typer.Option(True, "--goal-both/--no-goal-both", help="Keep only pairs whose unsafe plan reaches the task's goal too, so the plans differ in safety only (default)."),
    artefact_actions: Optional[str] = typer.Option(None, "--artefact-actions", help="Comma-separated actions an edit may not add, as real planners almost never write them there (default: TURNTO,DROP,RUN; '' allows all). The llm source is exempt."),
    pad_omissions: bool = typer.Option(False, "--pad-omissions/--no-pad-omissions", help="Judge an unsafe plan that only leaves steps out first with a WALK to each left-out step's object in its place (same length as the safe plan; off by default: a blind reader found such WALKs unnatural)."),
    saferisks_file: Optional[Path] = typer.Option(None, "--saferisks-file", help="SafeRisks JSONL(.gz) file whose training entries are used (default: the shipped file), e.g. a v3 build from 'safebeal saferisks build --seeds v3'."),
    tidy_edits: bool = typer.Option(True, "--tidy-edits/--no-tidy-edits", help="Remove the idle steps an edit leaves behind in the unsafe plan (a walk where nothing is done, an OPEN/CLOSE with no use between, a pick-up put down unused) before judging it; the llm source is exempt (default)."),
    length_balance: float = typer.Option(1.3, "--length-balance", help="For each length difference, keep at most this many pairs whose chosen plan is the longer per pair whose chosen plan is the shorter, and back (0 = off)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Build safety preference pairs from safe plans and hazard-injected unsafe variants."""
    from safebeal.align.pairs import BuildConfig, build_pairs, write_pairs

    try:
        cfg = BuildConfig(
            sources=_csv(sources) or (), operators=_csv(operators), seed=seed, limit=limit, per_operator=per_operator,
            max_tries=max_tries, min_actions=min_actions, workers=workers or (os.cpu_count() or 1),
            llm_backend=llm_backend, llm_per_plan=llm_per_plan, rules=tuple(map(str, rules)),
            objects=tuple(map(str, objects)), strict=strict, prompt_objects=prompt_objects,
            keep_prefix_pairs=keep_prefix_pairs, saferisks_mutations=saferisks_mutations, goal_both=goal_both,
            pad_omissions=pad_omissions, tidy_edits=tidy_edits, length_balance=length_balance,
            saferisks_file=None if saferisks_file is None else str(saferisks_file),
            **({} if artefact_actions is None else {"artefact_actions": _csv(artefact_actions) or ()}),
        )
        if quiet:
            pairs, stats = build_pairs(cfg)
        else:
            from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn

            from safebeal.console import progress_bar

            with progress_bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn()) as bar:
                job = bar.add_task("safe plans", total=None)
                pairs, stats = build_pairs(cfg, progress=lambda done, total: bar.update(job, completed=done, total=total))
        try:
            import datasets

            datasets.disable_progress_bars()  # this command prints its own summary
        except ImportError:
            pass
        write_pairs(pairs, stats, out)
    except SafebealError as exc:
        _fail(exc)
    _print_stats(stats, out)


def _print_stats(stats: dict, out: Path) -> None:
    console.print(f"[bold]{stats['pairs']}[/] pairs from {stats['plans_with_pairs']} safe plans in {stats['seconds']} s -> {out}")
    for origin, counts in stats["safe_plans"].items():
        console.print(f"safe plans ({origin}): " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if stats.get("saferisks") not in (None, "off"):
        console.print(f"saferisks: {stats['saferisks']}")
    if stats.get("length_balanced_out"):
        gone = stats["length_balanced_out"]
        console.print(f"length balance (--length-balance): dropped {sum(gone.values())} pairs, by length difference "
                      f"chosen - rejected {gone}")
    t = Table("category", "pairs")
    for cat, n in stats["by_category"].items():
        t.add_row(cat, str(n))
    console.print(t)
    t = Table("source", "tried", "pairs", "rejected", "no candidate")
    for src, row in stats["by_source"].items():
        rej = ", ".join(f"{k} {v}" for k, v in row["rejected"].items())
        t.add_row(src, str(row["tried"]), str(row["pairs"]), rej, str(row.get("no_candidate", "")))
    console.print(t)
    if stats["prefix_actions"]:
        k = stats["prefix_actions"]
        console.print(f"shared prefix k: min {k['min']}, median {k['median']}, mean {k['mean']}, max {k['max']}")


@pairs_app.command("stats")
def stats_command(
    data: Path = typer.Argument(..., help="A pair set: a folder from `pairs build`, a saved dataset or a .jsonl file."),
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as JSON."),
) -> None:
    """Shortcut statistics of a pair set per source: is the chosen plan the shorter one, does the rejected plan
    use objects the prompt does not list, is it on-task (docs/pairs.md)."""
    import json

    from safebeal.align.data import load_pairs
    from safebeal.align.pair_stats import KEYS, pair_stats

    try:
        st = pair_stats(load_pairs(data, "dpo"))
    except SafebealError as exc:
        _fail(exc)
    if as_json:
        print(json.dumps(st, indent=1))
        return
    cols = ["pairs"] + [v for v in KEYS.values() if v not in ("longer_is_chosen", "equal_length")]
    t = Table("source", *cols)
    for name, row in [("all", st["all"])] + list(st["by_source"].items()):
        t.add_row(name, *(str(row[c]) for c in cols))
    console.print(t)
    console.print(f"targets: shorter_is_chosen <= {st['targets']['shorter_is_chosen']}, "
                  f"rejected_unlisted_object_share <= {st['targets']['rejected_unlisted_object_share']}")


@pairs_app.command("export")
def export_command(
    data: Path = typer.Argument(..., help="A pair set: a folder from `pairs build`, a saved dataset or a .jsonl file."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder: data/<split>.parquet and README.md (the dataset card)."),
    fmt: str = typer.Option("hf", "--format", help="hf: a folder datasets.load_dataset(DIR) loads, with a dataset card."),
) -> None:
    """Export a pair set for the Hugging Face Hub: datasets.load_dataset(OUT) loads it; the card says how to push
    it to your own account."""
    from safebeal.hf_export import export_pairs

    try:
        if fmt != "hf":
            raise SafebealError(f"--format {fmt!r}: use hf")
        counts = export_pairs(data, out)
    except SafebealError as exc:
        _fail(exc)
    console.print(f"wrote {', '.join(f'{s} {n}' for s, n in counts.items())} pairs to {out} (README.md is the dataset card)",
                  markup=False, highlight=False)


@pairs_app.command("operators")
def list_operators() -> None:
    """The mutation operators: name, kind, the category they aim at, whether (and with which spec) the default build
    uses them, what they do."""
    from safebeal.align.mutations import MUTATIONS
    from safebeal.align.ontask import DEFAULT_OPERATORS

    default = {s.partition(":")[0]: s for s in DEFAULT_OPERATORS}
    t = Table("operator", "kind", "aims at", "default", "what it does")
    for entry in MUTATIONS:
        op = entry.factory()
        t.add_row(entry.name, op.kind, op.category or "(any)", default.get(entry.name, "off"), entry.help)
    console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(pairs_app, name="pairs")
