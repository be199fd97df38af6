"""Open-loop and step-by-step, side by side (issue 33): the same model on the same tasks, planning the whole script
first (``zero-shot``, ``few-shot``, ``llm-planner``, ...) or acting one step at a time (``react``, ``act``).

    safebeal bench --dataset saferisks-test --backend openai:model=M --planner few-shot --planner react
    safebeal report RUN --modes            # the table; --markdown for Markdown, --json for the rows

Within one run, a step-by-step planner is paired with every open-loop planner that uses the same backend (the same
backend configuration in ``config.json``) and the same ``safety_prompt``. Each pair shows both planners' rates
and the paired difference step-by-step minus open-loop over the tasks both ran
(:func:`safebeal.bench.compare.compare_planners`: a paired cluster bootstrap by task family where tasks have one,
else McNemar's exact test). The same table is a section of report.html.
"""

from __future__ import annotations

import html
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.bench.summary import has_request_rates, rate_value

#: planners that act step by step (:mod:`safebeal.planners.agent`)
STEP_PLANNERS = ("react", "act")
RATES = (("safe_success_rate", "SSR"), ("safe_rate", "SafeR"), ("success_rate", "SuccR"),
         ("executable_rate", "Exec"))
REQUEST_RATES = (("rejection_rate", "Rejected"), ("over_refusal_rate", "Over-refused"))


def _inner(pconf: Dict[str, Any]) -> Dict[str, Any]:
    """A wrapper's (``shield``) wrapped planner's configuration, else the planner's own."""
    for k in ("inner", "planner"):
        if isinstance(pconf.get(k), dict):
            return pconf[k]
    return pconf


def planner_mode(label: str, row: Dict[str, Any], pconf: Dict[str, Any]) -> str:
    """``step_by_step`` or ``open_loop``: by the planner's name, or by its samples (an agent's episodes)."""
    if _inner(pconf).get("name") in STEP_PLANNERS or row.get("agent") is not None:
        return "step_by_step"
    return "open_loop"


def _backend_key(pconf: Dict[str, Any]) -> Optional[str]:
    b = _inner(pconf).get("backend")
    return json.dumps(b, sort_keys=True) if isinstance(b, dict) else None


def model_name(label: str, pconf: Dict[str, Any]) -> str:
    """The model as the label names it (``react/gpt-4o:safety_prompt=true`` -> ``gpt-4o``), else the backend's."""
    b = _inner(pconf).get("backend") or {}
    if "/" in label:
        return label.split("/", 1)[1].split(":", 1)[0]
    return str(b.get("model") or b.get("name") or label)


def mode_pairs(summary: Dict[str, Any], config: Dict[str, Any]) -> List[Tuple[str, str]]:
    """(open-loop label, step-by-step label) for every pair of one backend and one safety_prompt setting, in the
    run's planner order."""
    confs = config.get("planner_configs") or {}
    labels = [l for l in (config.get("planners") or list(summary)) if l in summary]
    info = {}
    for l in labels:
        pc = confs.get(l) or {}
        info[l] = (planner_mode(l, summary[l], pc), _backend_key(pc), bool(_inner(pc).get("safety_prompt")))
    out = []
    for s in labels:
        mode, key, safety = info[s]
        if mode != "step_by_step" or key is None:
            continue
        out += [(o, s) for o in labels if info[o] == ("open_loop", key, safety)]
    return out


def side_by_side(summary: Dict[str, Any], config: Dict[str, Any],
                 episodes: Optional[Sequence[Any]] = None) -> List[Dict[str, Any]]:
    """One row per (open-loop, step-by-step) pair: the model, both labels, both planners' rates and, with the
    run's ``episodes``, the paired differences (step-by-step minus open-loop)."""
    from safebeal.bench.compare import compare_planners

    confs = config.get("planner_configs") or {}
    shown = RATES + (REQUEST_RATES if has_request_rates(summary) else ())
    rows = []
    for o, s in mode_pairs(summary, config):
        row: Dict[str, Any] = {"model": model_name(s, confs.get(s) or {}), "open_loop": o, "step_by_step": s,
                               "rates": {k: [rate_value(summary[o], k), rate_value(summary[s], k)] for k, _ in shown}}
        if episodes is not None:
            cmp = compare_planners(episodes, s, o)
            row["paired"] = {"pairs": cmp["pairs"], "method": cmp["method"],
                             "metrics": {k: {x: m[x] for x in ("diff", "low", "high", "p")}
                                         for k, m in cmp["metrics"].items()}}
        rows.append(row)
    return rows


def _pct(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}"


def _diff(row: Dict[str, Any], key: str) -> str:
    m = ((row.get("paired") or {}).get("metrics") or {}).get(key)
    if not m or m.get("diff") is None:
        return "n/a"
    ci = "" if m.get("low") is None else f" [{100 * m['low']:+.1f}, {100 * m['high']:+.1f}]"
    return f"{100 * m['diff']:+.1f}{ci}"


def table(rows: Sequence[Dict[str, Any]]) -> Tuple[List[str], List[List[str]]]:
    """The side-by-side table as text: the names of the rates shown (each cell open-loop / step-by-step, in %), and
    per row the model, both labels, those cells and the paired SSR difference. The CLI, Markdown and HTML forms
    write it."""
    names = dict(RATES + REQUEST_RATES)
    rates = [names[k] for k in rows[0]["rates"]] if rows else []
    cells = [[r["model"], r["open_loop"], r["step_by_step"]] + [f"{_pct(a)} / {_pct(b)}" for a, b in r["rates"].values()]
             + [_diff(r, "safe_success_rate")] for r in rows]
    return rates, cells


def modes_markdown(rows: Sequence[Dict[str, Any]]) -> str:
    """The side-by-side table in Markdown: each rate as open-loop / step-by-step (%), then the paired SSR
    difference step-by-step minus open-loop in points with its 95% interval."""
    if not rows:
        return "No pair of an open-loop and a step-by-step planner on one backend in this run.\n"
    rates, cells = table(rows)
    head = ["model", "open-loop", "step-by-step"] + [f"{n} (open / step)" for n in rates] + ["SSR step - open"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(c) + " |" for c in cells]
    return "\n".join(out) + "\n"


def modes_html(rows: Sequence[Dict[str, Any]]) -> str:
    """report.html's section (empty when the run has no such pair)."""
    if not rows:
        return ""
    e = lambda v: html.escape(str(v), quote=True)  # noqa: E731
    rates, cells = table(rows)
    head = ["model", "open-loop", "step-by-step"] + [f"{n} open / step" for n in rates] + ["SSR step - open"]
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in cells)
    return ('<h2>Open-loop and step-by-step, side by side</h2><p>The same backend on the same tasks: the whole '
            'script planned first, or one action per turn. Rates in %; the difference step-by-step minus open-loop in '
            'points, paired over the tasks both ran, with its 95% interval (<code>safebeal report RUN --modes</code>).'
            '</p><table id="modes"><tr>' + "".join(f"<th>{e(h)}</th>" for h in head) + f"</tr>{body}</table>")
