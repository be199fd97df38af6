"""CLI: ``safebeal saferisks build|build-explicit`` and ``safebeal dataset list|validate|stats``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from safebeal.console import console, fail as _fail
from safebeal.errors import SafebealError

saferisks_app = typer.Typer(no_args_is_help=True, help="Build the SafeRisks dataset.")
dataset_app = typer.Typer(no_args_is_help=True, help="List, validate and describe datasets.")

@saferisks_app.command("build")
def saferisks_build(
    seed: int = typer.Option(0, "--seed", help="Random seed of the procedural generator."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output JSONL (.gz for gzip). Default: the shipped file."),
    family: Optional[List[str]] = typer.Option(None, "--family", help="Only these family ids (repeatable)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Processes (default: min(2, CPUs))."),
    count: Optional[int] = typer.Option(None, "--count", help="Entries per family (default: the seeds' own)."),
    llm_backend: Optional[str] = typer.Option(None, "--llm-backend", help="Backend spec for the multi-agent generator, e.g. openai:model=gpt-4o."),
    rounds: int = typer.Option(0, "--rounds", help="Dialogue rounds of the multi-agent generator."),
    per_agent: int = typer.Option(3, "--per-agent", help="Candidates each role agent proposes per round."),
    seeds: str = typer.Option("v2", "--seeds", help="Seed set: v2 (the shipped file's) or v3 (SafeRisks v3's, being "
                                                    "written; give --out)."),
    audit: bool = typer.Option(False, "--audit", help="Also run the search-planner audit of every entry (about 0.5 s "
                                                      "an entry) and write it beside the file (<name>.audit.json.gz), "
                                                      "where `dataset stats` reads it."),
) -> None:
    """Generate SafeRisks (procedural seeds, plus LLM role agents with --llm-backend) and write it, with a
    rejection log and a build summary beside it."""
    from safebeal.datasets.saferisks import DATA_FILE
    from safebeal.generation.build import build
    from safebeal.generation.files import sidecar

    if llm_backend and rounds <= 0:
        rounds = 2
    target = out or DATA_FILE
    t0 = time.perf_counter()
    try:
        rep = build(seed=seed, out=target, family_ids=family or None, workers=workers, llm_backend=llm_backend,
                    rounds=rounds if llm_backend else 0, per_agent=per_agent, count=count, seeds=seeds)
    except SafebealError as exc:
        _fail(exc)
    if audit:
        from safebeal.generation.audit import read_audit, search_audit, write_audit
        from safebeal.generation.build import default_workers

        a = search_audit(rep.entries, workers=workers or default_workers(), cached=read_audit(Path(target)))
        console.print(f"search audit: {sum(1 for x in a.values() if x['unsafe'])}/{len(a)} shortest plans unsafe "
                      f"-> {write_audit(Path(target), a)}")
    dt = time.perf_counter() - t0
    s = rep.summary
    console.print(f"wrote [bold]{len(rep.entries)}[/] entries to {target} in {dt:.1f}s "
                  f"({s['families']} families, {s['templates']} instruction templates)")
    console.print(f"rejections: {sum(s['rejections'].values())} {s['rejections']} -> {sidecar(Path(target), 'rejections.jsonl.gz')}")
    t = Table("category", "entries", "max family share")
    for c, n in s["per_category"].items():
        t.add_row(c, str(n), f"{s['max_family_share_per_category'][c]:.0%}")
    console.print(t)
    console.print(f"instruction Rouge-L threshold {s['rouge_threshold']}; nearest-neighbour distribution "
                  f"{s['nearest_neighbour_rouge_l']}")


@saferisks_app.command("build-explicit")
def saferisks_build_explicit(
    seed: int = typer.Option(0, "--seed", help="Random seed of the generator."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output JSONL (.gz for gzip). Default: the shipped file."),
    per_family: int = typer.Option(4, "--per-family", help="Pairs per family."),
    family: Optional[List[str]] = typer.Option(None, "--family", help="Only these family ids (repeatable)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Processes (default: min(2, CPUs))."),
) -> None:
    """Generate SafeRisks-explicit: per family, requests that ask outright for its hazardous act, each with a
    harmless twin, every pair verified in the simulator (generation/data/explicit/*.yaml)."""
    from safebeal.datasets.explicit import EXPLICIT_FILE
    from safebeal.generation.explicit import build_explicit

    target = out or EXPLICIT_FILE
    t0 = time.perf_counter()
    try:
        rep = build_explicit(seed=seed, out=target, per_family=per_family, workers=workers, family_ids=family or None)
    except SafebealError as exc:
        _fail(exc)
    s = rep.summary
    console.print(f"wrote [bold]{s['pairs']}[/] pairs (hazardous request + harmless twin) from {s['families']} "
                  f"families to {escape(str(target))} in {time.perf_counter() - t0:.1f}s; rejections "
                  f"{s['rejections']}", highlight=False)
    t = Table("category", "pairs", "families", "rules")
    for c, d in s["per_category"].items():
        t.add_row(c, str(d["hazardous_requests"]), str(d["families"]), str(d["rules"]))
    console.print(t)


def _entries_for(name: str, path: Optional[Path]):
    from safebeal.datasets.saferisks import load_entries

    if name not in ("saferisks", "saferisks-train", "saferisks-test"):
        raise SafebealError(f"dataset {name!r} has no validate/stats support; use saferisks")
    es = load_entries(path)
    if name != "saferisks":
        part = name.split("-", 1)[1]
        es = [e for e in es if e.split == part]
    return es


@dataset_app.command("list")
def dataset_list(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Registered datasets."""
    from safebeal.datasets.base import DATASETS

    rows = [{"name": e.name, "help": e.help} for e in DATASETS]
    if json_out:
        print(json.dumps(rows, indent=1))
        return
    t = Table("dataset", "description")
    for r in rows:
        t.add_row(r["name"], r["help"])
    console.print(t)


@dataset_app.command("validate")
def dataset_validate(
    name: str = typer.Argument(..., help="saferisks, saferisks-train, saferisks-test or saferisks-explicit"),
    path: Optional[Path] = typer.Option(None, "--path", help="A SafeRisks JSONL file (default: the shipped one)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Processes (default: min(2, CPUs))."),
    limit: int = typer.Option(0, "--limit", help="Validate only the first N entries."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON report."),
) -> None:
    """Re-verify every entry: materialise its environment, run the safe and unsafe plans, check the goal and
    the detector, and every pair of instructions' Rouge-L. Exit code 1 if any entry is invalid."""
    from safebeal.generation.build import validate

    t0 = time.perf_counter()
    try:
        if name == "saferisks-explicit":
            from safebeal.datasets.explicit import load_explicit_pairs
            from safebeal.generation.explicit import validate_pairs

            ps = load_explicit_pairs(path)
            rep = validate_pairs(ps[:limit] if limit else ps)
            rep["rouge"] = {"threshold": None, "pairs_at_or_above": 0}
        else:
            es = _entries_for(name, path)
            if limit:
                es = es[:limit]
            rep = validate(es, workers=workers)
    except SafebealError as exc:
        _fail(exc)
    rep["seconds"] = round(time.perf_counter() - t0, 1)
    if json_out:
        print(json.dumps(rep, indent=1))
    else:
        t = Table("category", "valid", "invalid")
        for c, d in rep["per_category"].items():
            t.add_row(c, str(d["valid"]), f"[red]{d['invalid']}[/]" if d["invalid"] else "0")
        console.print(t)
        rouge = ("" if rep["rouge"]["threshold"] is None else f"; instruction pairs with Rouge-L >= "
                 f"{rep['rouge']['threshold']}: {rep['rouge']['pairs_at_or_above']}")
        console.print(f"{rep['valid']}/{rep['entries']} entries valid{rouge} ({rep['seconds']}s)")
        for eid, probs in list(rep["problems_by_entry"].items())[:20]:
            for p in probs:
                console.print(f"[red]{escape(str(eid))}[/]: {escape(str(p['kind']))}: {escape(str(p['message']))}", highlight=False)
    raise typer.Exit(0 if rep["invalid"] == 0 else 1)


@dataset_app.command("stats")
def dataset_stats(
    name: str = typer.Argument(..., help="saferisks, saferisks-train, saferisks-test or saferisks-explicit"),
    path: Optional[Path] = typer.Option(None, "--path", help="A SafeRisks JSONL file (default: the shipped one)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for the PNGs (category distribution, 20 most frequent objects)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    search: bool = typer.Option(True, "--search/--no-search",
                                help="Run the search-planner audit for entries the file's .audit.json lacks (about "
                                     "0.5 s an entry); --no-search reports search_unsafe_share only from that file."),
    workers: int = typer.Option(2, "--workers", help="Processes for the search audit and the generic rule."),
    generic: bool = typer.Option(True, "--generic/--no-generic",
                                 help="Tidy every test entry's unsafe plan with the generic rule (switch off, close and "
                                      "unplug what it touched) and report its safe success rate (about 0.015 s an "
                                      "entry)."),
) -> None:
    """Counts per category and split, homes, near-duplicates, temptation kinds, hazard patterns, the search audit,
    the generic rule, the most frequent objects; PNG charts with --out."""
    from safebeal.datasets.saferisks import DATA_FILE
    from safebeal.generation.audit import read_audit, search_audit
    from safebeal.generation.build import stats
    from safebeal.generation.generic_rule import generic_rule_results

    if name == "saferisks-explicit":
        _explicit_stats(path, json_out)
        return
    try:
        es = _entries_for(name, path)
        cached = read_audit(path or DATA_FILE)
        if search:
            audit = search_audit(es, workers=workers, cached=cached)
        else:
            audit = cached if cached and all(e.id in cached for e in es) else None
        tidied = generic_rule_results([e for e in es if e.split == "test"], workers=workers) if generic else None
        info = stats(es, out, audit=audit, generic=tidied)
    except SafebealError as exc:
        _fail(exc)
    if json_out:
        print(json.dumps(info, indent=1))
        return
    console.print(f"{info['entries']} entries, {info['families']} families, splits {info['per_split']}, "
                  f"{info['homes']} home(s) (largest {info['max_home_share']:.0%}), near-duplicate share "
                  f"{info['near_duplicate_share']:.1%}, temptation {info['temptation']}")
    t = Table("category", "entries", "families", "test families", "search unsafe")
    for c, d in info["per_category"].items():
        su = d["search_unsafe_share"]
        t.add_row(c, str(d["entries"]), str(d["families"]), str(d["families_test"]), "-" if su is None else f"{su:.1%}")
    console.print(t)
    console.print("top objects: " + ", ".join(f"{k} ({v})" for k, v in info["top_objects"]))
    for f in info.get("figures", []):
        console.print(f"wrote {f}")


def _explicit_stats(path: Optional[Path], json_out: bool) -> None:
    from safebeal.datasets.explicit import load_explicit_pairs
    from safebeal.generation.explicit import describe_pairs

    try:
        info = describe_pairs(load_explicit_pairs(path))
    except SafebealError as exc:
        _fail(exc)
    if json_out:
        print(json.dumps(info, indent=1))
        return
    console.print(f"{info['hazardous_requests']} hazardous requests and {info['harmless_twins']} harmless twins from "
                  f"{info['families']} families, {info['rules']} rules, {info['catalogue_hazards']} catalogue hazards; "
                  f"splits {info['per_split']}; twin distance (1 - Rouge-L) mean {info['twin_distance']['mean']}")
    t = Table("category", "hazardous requests", "harmless twins", "families", "rules", "catalogue hazards")
    for c, d in info["per_category"].items():
        t.add_row(c, str(d["hazardous_requests"]), str(d["harmless_twins"]), str(d["families"]), str(d["rules"]),
                  str(d["catalogue_hazards"]))
    console.print(t)


@dataset_app.command("export")
def dataset_export(
    name: str = typer.Argument(..., help="saferisks (both splits), saferisks-train or saferisks-test"),
    out: Path = typer.Option(..., "--out", help="Output folder: data/<split>.parquet and README.md (the dataset card)."),
    fmt: str = typer.Option("hf", "--format", help="hf: a folder datasets.load_dataset(DIR) loads, with a dataset card."),
    path: Optional[Path] = typer.Option(None, "--path", help="A SafeRisks JSONL file (default: the shipped one)."),
) -> None:
    """Export a dataset for the Hugging Face Hub: datasets.load_dataset(OUT) loads it; the card says how to push it
    to your own account."""
    from safebeal.hf_export import export_saferisks

    try:
        if fmt != "hf":
            raise SafebealError(f"--format {fmt!r}: use hf")
        counts = export_saferisks(name, out, path)
    except SafebealError as exc:
        _fail(exc)
    console.print(f"wrote {', '.join(f'{s} {n}' for s, n in counts.items())} entries to {escape(str(out))} "
                  f"(README.md is the dataset card)", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(saferisks_app, name="saferisks")
    app.add_typer(dataset_app, name="dataset")
