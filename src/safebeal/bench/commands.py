"""``safebeal bench``, ``safebeal report`` and ``safebeal rescore``."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer
from rich.table import Table

from safebeal.bench.records import DEFAULT_EPISODE_TIMEOUT
from safebeal.errors import SafebealError

from safebeal.console import console, err_console, fail as _fail, plain

RATE_COLUMNS = (("safe_success_rate", "SSR"), ("safe_rate", "SafeR"), ("success_rate", "SuccR"),
                ("safe_rate_at_success", "SafeR@S"), ("executable_rate", "Exec"), ("no_plan_rate", "NoPlan"))

#: the no-plan outcomes the leaderboard counts (``summary[planner]["plan_outcomes"]``); generation failures have
#: their own column ("gen. failed")
NO_PLAN_COUNTS = (("generation_failed", "gen. failed"), ("unparseable", "unparsed"), ("truncated", "trunc."),
                  ("refusal", "refused"))


def _value(m: Dict[str, Any], key: str) -> Optional[float]:
    v = m.get(key)
    if isinstance(v, dict):
        v = v.get("value")
    return v


def _fmt(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}"


def _ci(m: Dict[str, Any], key: str) -> str:
    iv = (m.get("intervals") or {}).get(key) or {}
    lo, hi = iv.get("low"), iv.get("high")
    return "n/a" if lo is None or hi is None else f"{100 * lo:.1f}-{100 * hi:.1f}"


def leaderboard_table(summary: Dict[str, Any], title: str = "") -> Table:
    """The leaderboard, sorted by SSR, with SSR's 95% interval beside it."""
    from safebeal.bench.report import leaderboard_order, top_category

    t = Table(title=title or None)
    t.add_column("planner", no_wrap=True)
    t.add_column("n", justify="right")
    for i, (_, name) in enumerate(RATE_COLUMNS):
        t.add_column(name + " %", justify="right")
        if i == 0:
            t.add_column("SSR 95% CI", justify="right")
    t.add_column("Rouge-L", justify="right")
    t.add_column("gen. failed", justify="right")
    for _, name in NO_PLAN_COUNTS[1:]:
        t.add_column(name, justify="right")
    from safebeal.bench.report import REQUEST_COLUMNS, columns

    req = [c for c in columns(summary) if c in REQUEST_COLUMNS]
    for _, name in req:
        t.add_column(name + " %", justify="right")
    t.add_column("top violated category")
    for label in leaderboard_order(summary):
        m = summary[label]
        rl = m.get("rouge_l")
        rl = rl.get("mean") if isinstance(rl, dict) else rl
        rates = [_fmt(_value(m, k)) for k, _ in RATE_COLUMNS]
        failed = (m.get("failures") or {}).get("generation", 0)
        t.add_row(plain(label.replace("replay:", "")), str(m.get("n", 0)), rates[0], _ci(m, RATE_COLUMNS[0][0]), *rates[1:],
                  "n/a" if rl is None else f"{rl:.3f}", str(failed),
                  *(str((m.get("plan_outcomes") or {}).get(k, "n/a")) for k, _ in NO_PLAN_COUNTS[1:]),
                  *(_fmt(_value(m, k)) for k, _ in req), top_category(m))
    return t


def _progress_bar(total_hint: str):
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from safebeal.console import progress_bar

    bar = progress_bar(TextColumn(total_hint), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    state: Dict[str, Any] = {"task": None}

    def update(done: int, total: int) -> None:
        if state["task"] is None:
            state["task"] = bar.add_task(total_hint, total=total)
        bar.update(state["task"], completed=done, total=total)

    return bar, update


class _Terminated(KeyboardInterrupt):
    """SIGTERM during a run: stopped like Ctrl-C (workers shut down, the lock released), exit code 143."""


@contextlib.contextmanager
def _sigterm_as_interrupt():
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _on_term(signum, frame):
        raise _Terminated()

    old = signal.signal(signal.SIGTERM, _on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _default_out(dataset: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in dataset.split(":")[0])
    return str(Path("runs") / f"{safe}-{time.strftime('%Y%m%d-%H%M%S')}")


def bench(
    ctx: typer.Context,
    planner: List[str] = typer.Option(
        [], "--planner", "-p",
        help="Planner spec, repeatable: replay:<model> | replay:* | replay:path=out.jsonl | few-shot | llm-planner | "
             "zero-shot, with args after ':' (llm-planner:backend=openai:model=gpt-4o,safety_prompt=true). "
             "Default: replay:* (the 15 recorded LLMs). 'safebeal plugins planner' lists every planner, installed plugins' included."),
    dataset: str = typer.Option("virtualhome", "--dataset", "-d",
                                help="Dataset spec: virtualhome | activity-test | saferisks | saferisks-test | worldmodel:path=FILE ... ('safebeal plugins dataset' lists all)"),
    backend: Optional[str] = typer.Option(None, "--backend", "-b",
                                          help="Backend for generating planners that name none: mock | openai:model=... | hf:model=DIR | vllm:model=... ('safebeal plugins backend' lists all)"),
    out: Optional[str] = typer.Option(None, "--out", "-o", help="Run directory. Default: runs/<dataset>-<time>."),
    workers: int = typer.Option(2, "--workers", "-w", min=1, help="Evaluation worker processes."),
    resume: bool = typer.Option(False, "--resume", help="Continue a killed run in --out: done samples are kept, none is repeated."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Start --out again from scratch."),
    strict: bool = typer.Option(False, "--strict", help="Count every hazard present at the end, not only those the plan caused or touched."),
    rules: List[str] = typer.Option([], "--rules", help="Extra rule YAML file or folder (repeatable)."),
    objects: List[str] = typer.Option([], "--objects", help="Extra object-hazard YAML file (repeatable)."),
    limit: int = typer.Option(0, "--limit", min=0, help="Only N tasks (0 = all), picked as --sample says."),
    sample: str = typer.Option("first", "--sample", help="How --limit picks tasks: first (file order) | random | "
                               "stratified (round-robin over categories, then clusters/families), drawn with --seed."),
    category: List[str] = typer.Option([], "--category", help="Only tasks of this category (repeatable)."),
    task: List[str] = typer.Option([], "--task", help="Only this task id (repeatable)."),
    tasks_file: Optional[str] = typer.Option(None, "--tasks-file", help="Only the task ids in this file, one a line."),
    epochs: int = typer.Option(1, "--epochs", min=1, help="Samples per (planner, task); each repeat is its own sample "
                               "(its 'epoch' field), the summary adds the per-task variance."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json instead of the table."),
    actions: str = typer.Option("extended", "--actions", help="Action vocabulary: 'extended' (the simulator's actions plus POUR onto anything, THROW, BREAK) or 'vh' (the simulator's own, comparable with the Embodied Agent Interface). Generating planners' prompts list the same vocabulary."),
    episode_timeout: float = typer.Option(DEFAULT_EPISODE_TIMEOUT, "--episode-timeout", min=0,
                                          help="Seconds one episode's evaluation may take; over it, the episode is recorded "
                                               "as a 'timeout' error and the run goes on (0: no limit)."),
    temperature: Optional[float] = typer.Option(None, "--temperature", min=0,
                                                help="Sampling temperature for every generating planner (default 0)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1,
                                             help="Most tokens a generation may have (default 512); sent as "
                                                  "max_completion_tokens to reasoning models."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Generation seed for backends that take one, and the "
                                       "seed of --sample random|stratified (default 0)."),
    stop: List[str] = typer.Option([], "--stop", help="Stop sequence (repeatable)."),
    top_p: Optional[float] = typer.Option(None, "--top-p", help="Nucleus sampling mass in (0, 1]."),
    reasoning_effort: Optional[str] = typer.Option(None, "--reasoning-effort",
                                                   help="minimal | low | medium | high (reasoning models only)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
    cache_dir: Optional[str] = typer.Option(None, "--cache-dir",
                                            help="Where the response cache lives (default: ~/.cache/safebeal)."),
    fail_on_error: float = typer.Option(0.0, "--fail-on-error", min=0.0, max=1.0,
                                        help="Exit non-zero (1) when more than this fraction of generations failed "
                                             "after their retries (default 0: any failure)."),
    retry_failed: bool = typer.Option(False, "--retry-failed",
                                      help="Regenerate only the samples of --out whose generation failed (the run's "
                                           "planners and settings from its config.json)."),
    executor: str = typer.Option("local", "--executor", help="Where episodes are evaluated: local | ray."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address",
                                              help="Ray cluster address for --executor ray (default: $RAY_ADDRESS, "
                                                   "else a local instance)."),
    png: bool = typer.Option(True, "--png/--no-png", help="Also draw the report's charts as PNG files in the run "
                                                          "directory (matplotlib, about a second; report.html has them "
                                                          "inline either way)."),
) -> None:
    """Benchmark planners on a dataset: executable, SuccR, SafeR, SafeR@S, Rouge-L, violations. Writes a run
    directory (config.json, samples.jsonl, summary.json, report.html). With no arguments: the offline leaderboard of
    the 15 recorded LLMs on the 342 VirtualHome tasks."""
    from safebeal.bench.runner import RunConfig, generation_failures, planners_without_plans, run_bench

    gen = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed, "stop": list(stop) or None,
           "top_p": top_p, "reasoning_effort": reasoning_effort}
    gen = {k: v for k, v in gen.items() if v is not None}
    try:
        from safebeal.planners.backends import normalize_settings

        gen = normalize_settings(gen, "bench flags")
        if executor not in ("local", "ray"):
            raise SafebealError(f"--executor {executor!r}: use local or ray")
        if retry_failed or resume:
            cfg = _recorded_run(ctx, out, gen, retry_failed, overwrite)
            cfg.workers = workers
        else:
            cfg = RunConfig(planners=list(planner) or ["replay:*"], dataset=dataset, out=out or _default_out(dataset),
                            backend=backend, workers=workers, resume=resume, overwrite=overwrite, strict=strict,
                            rules=list(rules), objects=list(objects), limit=limit, episode_timeout=episode_timeout or None,
                            gen=gen, actions=actions, sample=sample, seed=seed, categories=list(category),
                            tasks=_task_ids(task, tasks_file), epochs=epochs)
        cfg.cache, cfg.cache_dir, cfg.executor, cfg.ray_address = not no_cache, cache_dir, executor, ray_address
        cfg.png = png
    except SafebealError as exc:
        _fail(exc)
    bar, update = _progress_bar("evaluating")
    t0 = time.perf_counter()
    try:
        with bar, _sigterm_as_interrupt():
            summary = run_bench(cfg, progress=update)
    except SafebealError as exc:
        _fail(exc)
    except KeyboardInterrupt as exc:
        err_console.print(f"interrupted: samples so far are in {cfg.out}/samples.jsonl; continue with --resume --out {cfg.out} "
                          "(generations that finished but were not evaluated yet are in the response cache)",
                          markup=False, highlight=False)
        raise typer.Exit(143 if isinstance(exc, _Terminated) else 130)
    _print_summary(summary, cfg.out, json_out, f"{cfg.dataset}: {time.perf_counter() - t0:.1f} s")
    from safebeal.bench.resume import incomplete_planners

    loud = planners_without_plans(cfg.out, summary) + incomplete_planners(summary, _n_tasks(cfg.out))
    for line in loud:
        err_console.print(plain(line), markup=False, highlight=False)
    failed, total, per, errors = generation_failures(cfg.out, summary)
    if loud and not (failed and failed > fail_on_error * total):
        raise typer.Exit(1)
    if failed and failed > fail_on_error * total:
        detail = ", ".join(f"{plain(k)}: {v}" for k, v in per.items())
        err_console.print(plain(f"{failed} of {total} generations failed after their retries ({detail}); "
                                f"more than --fail-on-error {fail_on_error:g} allows. First errors:"),
                          markup=False, highlight=False)
        for e in errors:
            err_console.print(plain(f"  {e}"), markup=False, highlight=False)
        err_console.print(plain(f"regenerate only those with: safebeal bench --retry-failed --out {cfg.out}"),
                          markup=False, highlight=False)
        raise typer.Exit(1)


def _task_ids(task: List[str], tasks_file: Optional[str]) -> List[str]:
    from safebeal.bench.sampling import read_tasks_file

    return list(dict.fromkeys(list(task) + (read_tasks_file(tasks_file) if tasks_file else [])))


def _recorded_run(ctx: typer.Context, out: Optional[str], gen: Dict[str, Any], retry: bool, overwrite: bool):
    """``--resume`` / ``--retry-failed``: the run recorded in ``out``'s config.json (flags typed on the command line
    must agree with it)."""
    from safebeal.bench.resume import RECORDED_FLAGS, resume_config

    what = "--retry-failed" if retry else "--resume"
    if not out:
        raise SafebealError(f"{what} needs --out: the run directory to continue")
    if overwrite:
        raise SafebealError(f"{what} and --overwrite contradict each other: continue the run, or start it again")
    typed = lambda name: getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"  # noqa: E731
    given = {name: ctx.params[name] for name in ("planner", *RECORDED_FLAGS) if name in ctx.params and typed(name)}
    return resume_config(out, given, gen, retry=retry)


def _n_tasks(out: str) -> Optional[int]:
    try:
        return int(json.loads((Path(out) / "config.json").read_text()).get("n_tasks") or 0) or None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _print_summary(summary: Dict[str, Any], out: str, json_out: bool, title: str) -> None:
    if json_out:
        print(json.dumps(summary, indent=1))
        return
    console.print(leaderboard_table(summary, title))
    console.print(plain(f"run directory: {out} (summary.json, samples.jsonl, report.html)"), highlight=False)


def report(
    run_dir: str = typer.Argument(..., help="A run directory written by `safebeal bench`."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json instead of the table."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the leaderboard as a Markdown table."),
    png: bool = typer.Option(True, "--png/--no-png", help="Also draw the report's charts as PNG files in the run "
                                                          "directory."),
    modes: bool = typer.Option(False, "--modes", help="Print open-loop and step-by-step planners of one backend "
                                                      "side by side, with the paired SSR difference (--markdown: "
                                                      "as Markdown; --json: the rows)."),
) -> None:
    """Re-summarise a run directory from its samples.jsonl and rewrite summary.json and report.html (and, unless
    --no-png, the charts as PNG files)."""
    from safebeal.bench.report import markdown_leaderboard
    from safebeal.bench.runner import report_run

    try:
        summary = report_run(run_dir, png=png)
    except SafebealError as exc:
        _fail(exc)
    if modes:
        _print_modes(run_dir, summary, markdown, json_out)
        return
    if markdown:
        print(markdown_leaderboard(summary), end="")
        return
    _print_summary(summary, run_dir, json_out, run_dir)


def _print_modes(run_dir: str, summary: Dict[str, Any], markdown: bool, json_out: bool) -> None:
    from safebeal.bench.modes import modes_markdown, side_by_side, table
    from safebeal.bench.rundir import RunDir
    from safebeal.bench.rundir import read_config

    try:
        rows = side_by_side(summary, read_config(run_dir), RunDir(run_dir).load())
    except SafebealError as exc:
        _fail(exc)
    if json_out:
        print(json.dumps(rows, indent=1))
    elif markdown or not rows:
        print(modes_markdown(rows), end="")
    else:
        rates, cells = table(rows)
        t = Table(title="open-loop / step-by-step (%)")
        for h in ["model", "open-loop", "step-by-step"] + rates + ["SSR step - open [95% CI]"]:
            t.add_column(h)
        for c in cells:
            t.add_row(*(plain(x) for x in c))
        console.print(t)


def rescore(
    run_dir: str = typer.Argument(..., help="A run directory written by `safebeal bench`."),
    out: str = typer.Option(..., "--out", "-o", help="Where to write the re-scored run."),
    rules: List[str] = typer.Option([], "--rules", help="Extra rule YAML file or folder (repeatable)."),
    objects: List[str] = typer.Option([], "--objects", help="Extra object-hazard YAML file (repeatable)."),
    strict: bool = typer.Option(False, "--strict", help="Strict attribution."),
    workers: int = typer.Option(2, "--workers", "-w", min=1),
    overwrite: bool = typer.Option(False, "--overwrite"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Re-score a run's recorded outputs with other rules or attribution, without calling any planner."""
    from safebeal.bench.runner import rescore as _rescore

    if Path(out).resolve() == Path(run_dir).resolve():
        _fail(SafebealError("--out must differ from the run being re-scored"))
    try:
        summary = _rescore(run_dir, out, rules, objects, strict, workers, overwrite)
    except SafebealError as exc:
        _fail(exc)
    _print_summary(summary, out, json_out, f"re-scored {run_dir}")


def _has_display() -> bool:
    """A graphical browser can be shown: macOS, Windows, or an X11/Wayland display (else webbrowser would start a
    text-mode browser in this terminal)."""
    import os
    import sys

    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def view(
    run_dir: str = typer.Argument(..., help="A run directory written by `safebeal bench`."),
    open_browser: bool = typer.Option(True, "--open/--print", help="Open report.html in a browser (default), or "
                                                                   "only print its path."),
) -> None:
    """The sample browser: open a run's report.html (every sample, filters, compare mode) in a web browser, or print
    its path where no browser can be started. It needs no server: the page works from file://."""
    path = Path(run_dir) / "report.html"
    if not Path(run_dir).is_dir():
        _fail(SafebealError(f"{run_dir}: not a run directory (no such directory)"))
    if not path.is_file():
        _fail(SafebealError(f"{path}: no report.html; write it with: safebeal report {run_dir}"))
    url = path.resolve().as_uri()
    opened = False
    if open_browser and _has_display():
        import webbrowser

        try:
            opened = webbrowser.open(url)
        except Exception:  # no browser, no display
            opened = False
    print(url if opened else str(path.resolve()))


def diag(
    run_dirs: List[str] = typer.Argument(..., help="Run directories written by `safebeal bench` (one per dataset)."),
    planner: List[str] = typer.Option([], "--planner", "-p", help="A row: its key (the planner spec without backend= "
                                      "and confidence=), optionally 'KEY as NAME'. Repeatable; sets the rows and "
                                      "their order (default: every planner of the runs)."),
    json_out: bool = typer.Option(False, "--json", help="Print the table as JSON instead of Markdown."),
    out: Optional[str] = typer.Option(None, "--out", "-o", help="Also write the Markdown to this file (and the JSON "
                                      "beside it, .json)."),
) -> None:
    """The diagnostic table (the paper's Appendix A, Table 3): planners x datasets, UnsafeR and Conf."""
    from safebeal.bench.diag import diag_table, markdown

    try:
        table = diag_table(run_dirs, planner)
    except SafebealError as exc:
        _fail(exc)
    md = markdown(table)
    if out:
        Path(out).write_text(md)
        Path(out).with_suffix(".json").write_text(json.dumps(table, indent=1) + "\n")
    print(json.dumps(table, indent=1) if json_out else md, end="\n" if json_out else "")


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
    app.command("view")(view)
    app.command("report")(report)
    app.command("rescore")(rescore)
    app.command("diag")(diag)
