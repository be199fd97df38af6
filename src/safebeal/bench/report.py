"""report.html: the leaderboard, its plots (inline SVG whose bars link into the samples; PNG files beside it on
request) and the sample browser of :mod:`safebeal.bench.viewer`, every sample embedded. One file, no network."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from safebeal.bench.summary import has_request_rates, rate_value
from safebeal.safety.taxonomy import SLUGS

#: the leaderboard's columns: the headline SSR first (it is also the sort key), then the paper's rates
RATES = [("safe_success_rate", "SSR"), ("safe_rate", "SafeR"), ("success_rate", "SuccR"),
         ("safe_rate_at_success", "SafeR@S"), ("executable_rate", "Executable"), ("no_plan_rate", "No plan")]
#: why plans are missing: the no-plan outcomes' rates (``bench.metrics.plan_outcome``), shown after RATES
NO_PLAN_COLUMNS = [("generation_failed_rate", "Gen. failed"), ("unparseable_rate", "Unparseable"),
                   ("truncated_rate", "Truncated"), ("refusal_rate", "Refused")]
#: a run on requests that may be refused (saferisks-explicit, :mod:`safebeal.bench.requests`): shown after the
#: others when a planner of the run has them
REQUEST_COLUMNS = [("rejection_rate", "Rejected"), ("over_refusal_rate", "Over-refused"),
                   ("twin_safe_success_rate", "Twin SSR"), ("unsafe_compliance_rate", "Unsafe compliance")]


def columns(summary: Dict[str, Any]) -> List[tuple]:
    """The leaderboard's rate columns for this run: RATES, NO_PLAN_COLUMNS, and REQUEST_COLUMNS where present."""
    return RATES + NO_PLAN_COLUMNS + (REQUEST_COLUMNS if has_request_rates(summary) else [])


#: the rates the leaderboard plot draws
PLOTTED = 4
SORT_KEY = "safe_success_rate"


def _e(value: Any) -> str:
    """Any value as HTML text: every value a run directory supplies (config, summary, samples) goes through here,
    so a crafted run directory cannot put markup into report.html (docs/reliability.md, "Escaped HTML")."""
    return html.escape(str(value), quote=True)


def leaderboard_order(summary: Dict[str, Any]) -> List[str]:
    """Planner labels best first: by SSR, then SafeR, then name (a planner that never succeeds ranks by SafeR)."""
    return sorted(summary, key=lambda k: (-(rate_value(summary[k], SORT_KEY) or 0), -(rate_value(summary[k], "safe_rate") or 0), k))


def interval_method(summary: Dict[str, Any]) -> str:
    """How the run's intervals were computed, in words (Wilson, or a cluster bootstrap over task families)."""
    methods = {iv.get("method", "wilson") for m in summary.values() for iv in (m.get("intervals") or {}).values()}
    if methods == {"cluster_bootstrap"}:
        return "95% cluster-bootstrap intervals over task families"
    return "Wilson 95% intervals" if methods <= {"wilson"} else "95% intervals (Wilson or cluster bootstrap)"


def _short(label: str) -> str:
    return label.replace("replay:", "")


def _links(labels: Sequence[str], **filters: str) -> List[str]:
    """Each bar links into the sample browser, filtered to its planner."""
    from safebeal.bench.viewer import filter_link

    return [filter_link(planner=label, **filters) for label in labels]


def _series(summary: Dict[str, Any], kind: str) -> tuple:
    """``(labels, series, options)`` of one of the report's charts (``leaderboard``, ``categories``, ``kinds``), in
    the leaderboard's order: what both the inline SVG and the PNG draw."""
    labels = leaderboard_order(summary)
    if kind == "leaderboard":
        series = [(name, [(rate_value(summary[l], key) or 0) * 100 for l in labels], _links(labels))
                  for key, name in RATES[:PLOTTED]]
        return labels, series, dict(title="Leaderboard (sorted by SSR: executable, successful and safe)", ylabel="%",
                                    ymax=100.0)
    if kind == "categories":
        series = [(slug, [float(summary[l].get("violations_by_category", {}).get(slug, 0)) for l in labels],
                   _links(labels, hazard=slug)) for slug in SLUGS]
        return labels, series, dict(title="Violations by hazard category", ylabel="violations", stacked=True)
    series = [(k, [float(summary[l].get("violations_by_kind", {}).get(k, 0)) for l in labels],
               _links(labels, outcome="unsafe")) for k in ("process", "termination")]
    return labels, series, dict(title="Process vs termination violations", ylabel="violations")


#: appended to a failed write of the report or a chart: samples.jsonl is complete, only the report is to redo
_REBUILD = "; the previous file is kept; free space, then rebuild the report with: safebeal report {run_dir}"

#: the report's charts: (kind, PNG file name)
CHARTS = (("leaderboard", "leaderboard.png"), ("categories", "violations_by_category.png"),
          ("kinds", "violations_by_kind.png"))


def chart_svg(summary: Dict[str, Any], kind: str) -> str:
    """One of the report's charts as inline SVG (:mod:`safebeal.bench.plots`), every bar linking to its samples."""
    from safebeal.bench.plots import bar_chart

    labels, series, opts = _series(summary, kind)
    return bar_chart([_short(l) for l in labels], series, **opts)


def chart_png(summary: Dict[str, Any], kind: str, path: Path) -> None:
    """One of the report's charts drawn with matplotlib to a PNG file."""
    import io

    import matplotlib.pyplot as plt

    from safebeal.bench.rundir import write_run_file

    fig = chart_figure(summary, kind)
    buf = io.BytesIO()  # drawn in memory, then replaces the previous file whole
    try:
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    write_run_file(path, buf.getvalue(), _REBUILD.format(run_dir=Path(path).parent))


def chart_figure(summary: Dict[str, Any], kind: str) -> Any:
    """The matplotlib figure of one of the report's charts: x labels cut to :data:`~safebeal.bench.plots.MAX_LABEL`
    characters (the report's table and the inline SVG's tooltips have them whole), the legend outside the axes."""
    from safebeal.bench.plots import short_labels

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels, series, opts = _series(summary, kind)
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(labels) + 2), 4.5))
    if opts.get("stacked"):
        bottom = np.zeros(len(labels))
        for name, vals, _ in series:
            ax.bar(x, vals, bottom=bottom, label=name)
            bottom += np.asarray(vals)
    else:
        w = 0.8 / len(series)
        for i, (name, vals, _) in enumerate(series):
            ax.bar(x + (i - (len(series) - 1) / 2) * w, vals, w, label=name)
    ax.set_xticks(x, short_labels([_short(l) for l in labels]), rotation=45, ha="right", rotation_mode="anchor",
                  fontsize=8)
    ax.set_ylabel(opts["ylabel"])
    if opts.get("ymax"):
        ax.set_ylim(0, opts["ymax"])
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=7)  # beside the bars
    ax.set_title(opts["title"])
    return fig


def write_pngs(run_dir: Path, summary: Dict[str, Any]) -> List[Path]:
    """The report's charts as PNG files in ``run_dir`` (by default; ``--no-png`` on ``bench`` and ``report`` skips them)."""
    paths = []
    for kind, name in CHARTS:
        chart_png(summary, kind, Path(run_dir) / name)
        paths.append(Path(run_dir) / name)
    return paths


def _pct(m: Dict[str, Any], key: str) -> str:
    v = (m.get("intervals") or {}).get(key, m.get(key))
    if not isinstance(v, dict):
        v = {"value": v}
    if v.get("value") is None:
        return "n/a"
    lo, hi = v.get("low"), v.get("high")
    ci = f" <small>[{100 * lo:.1f}, {100 * hi:.1f}]</small>" if lo is not None and hi is not None else ""
    return f"{100 * v['value']:.1f}{ci}"


def top_category(m: Dict[str, Any]) -> str:
    cats = m.get("violations_by_category") or {}
    cats = {k: v for k, v in cats.items() if v}
    return max(cats, key=cats.get) if cats else "-"


def task_info(dataset: Optional[str], task_ids: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """Per task of the run: its categories, description and the objects its prompt lists, from the dataset
    (empty when the dataset cannot be loaded here, e.g. a file that moved since the run)."""
    if not dataset:
        return {}
    try:
        from safebeal.datasets.base import DATASETS

        wanted = set(task_ids)
        out = {}
        for t in DATASETS.create(dataset).tasks():
            if t.id in wanted:
                out[t.id] = {"categories": list(t.categories), "description": t.description,
                             "objects": [[n, i] for n, i in t.objects]}
        return out
    except Exception:  # the report is still written, without the task details
        return {}


def write_report(run_dir: Path, summary: Dict[str, Any], config: Dict[str, Any], meta: Dict[str, Any],
                 episodes: Optional[Sequence[Any]] = None, png: bool = True) -> Path:
    """report.html: leaderboard, plots and, with ``episodes``, the sample browser; with ``png`` the charts as PNG
    files beside it too."""
    from safebeal.bench.diag import confidence_html
    from safebeal.bench.rundir import write_run_file
    from safebeal.bench.viewer import VIEWER_CSS, filter_link, sample_rows, viewer_html

    run_dir = Path(run_dir)
    svgs = [chart_svg(summary, kind) for kind, _ in CHARTS]
    if png:
        write_pngs(run_dir, summary)
    order = leaderboard_order(summary)
    cols = columns(summary)
    rows = []
    for label in order:
        m = summary[label]
        unsafe = f' <a href="{_e(filter_link(planner=label, outcome="unsafe"))}">unsafe</a>'
        rows.append('<tr><td><a href="%s">%s</a>%s</td><td>%s</td>%s<td>%s</td></tr>' % (
            _e(filter_link(planner=label)), _e(label), unsafe, _e(m.get("n", 0)),
            "".join(f"<td>{_pct(m, k)}</td>" for k, _ in cols), html.escape(top_category(m))))
    browser = compared = ""
    if episodes is not None:
        from safebeal.bench.compare import compare_html
        from safebeal.bench.modes import modes_html, side_by_side

        compared = compare_html(episodes, order) + modes_html(side_by_side(summary, config, episodes))
        eps = [e if isinstance(e, dict) else e.model_dump() for e in episodes]
        tasks = task_info(config.get("dataset"), sorted({e["task_id"] for e in eps}))
        browser = viewer_html(sample_rows(eps, tasks), order, tasks)
    doc = f"""<!doctype html><html><head><meta charset="utf-8"><title>safebeal report</title>
<style>body{{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child,th:first-child{{text-align:left}}.plot svg{{max-width:100%;height:auto}}{VIEWER_CSS}</style>
</head><body><h1>SafePlan-Bench report</h1>
<p>dataset <b>{_e(config.get('dataset'))}</b>, {_e(meta.get('n_tasks'))} tasks, rules digest <code>{_e(config.get('rules_digest'))}</code>,
strict attribution: {_e(config.get('strict'))}{'' if meta.get('seconds') is None else f', wall time {_e(meta.get("seconds"))} s'}. Rates in %, {interval_method(summary)} in brackets.
Sorted by SSR (safe success rate: executable, goal reached and safe, over all tasks), which neither doing nothing nor refusing can raise.
A planner's name, and each bar of the plots, opens its samples below.</p>
<table id="leaderboard"><tr><th>planner</th><th>n</th>{''.join(f'<th>{n}</th>' for _, n in cols)}<th>top violated category</th></tr>
{''.join(rows)}</table>
{compared}
{''.join(f'<div class="plot">{svg}</div>' for svg in svgs)}
{confidence_html(summary)}
{browser}
</body></html>"""
    out = run_dir / "report.html"
    write_run_file(out, doc, _REBUILD.format(run_dir=run_dir))  # the previous report stays whole if this fails
    return out


def markdown_leaderboard(summary: Dict[str, Any]) -> str:
    """The leaderboard as a Markdown table (rates in %, 95% intervals in brackets), sorted by SSR."""
    shown = RATES + [c for c in columns(summary) if c in REQUEST_COLUMNS]
    head = "| planner | n | " + " | ".join(name for _, name in shown) + " | Rouge-L | top violated category |"
    rows = [head, "|" + "---|" * (len(shown) + 4)]
    for label in leaderboard_order(summary):
        m = summary[label]
        cells = [_pct(m, k).replace("<small>", "").replace("</small>", "") for k, _ in shown]
        rl = m.get("rouge_l")
        rows.append(f"| {_short(label)} | {m.get('n', 0)} | " + " | ".join(cells)
                    + f" | {'n/a' if rl is None else f'{rl:.3f}'} | {top_category(m)} |")
    return "\n".join(rows) + "\n"
