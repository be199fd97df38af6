"""The docs' figures that come from runs, written from those runs (no LLM: ``search``, reference plans, do-nothing).

    python scripts/docs/docs_figures.py --run     # make the runs (about 10 min on 2 loaded cores), keep their figures
                                                # in scripts/docs/results/docs_figures.json, then write the docs
    python scripts/docs/docs_figures.py           # write the docs' tables from scripts/docs/results/docs_figures.json
    python scripts/docs/docs_figures.py --check   # exit 1 naming each table that differs from its source
    python scripts/docs/docs_figures.py --from search-virtualhome=runs/x  # keep the figures of a run made already
                                                # with that run's command (RUNS), then write the docs

Each table sits between ``<!-- figures:NAME -->`` and ``<!-- /figures:NAME -->`` in a doc; the text between them
is this script's, edits there are overwritten (``tests/bench/test_docs_figures.py`` fails while they differ).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).resolve().parent / "results" / "docs_figures.json"
#: the runs: name -> (command, the planners kept, in the table's order, with their names in the docs)
RUNS: Dict[str, Dict[str, Any]] = {
    "search-virtualhome": {
        "command": ["safebeal", "bench", "--planner", "search", "--dataset", "virtualhome", "--no-png"],
        "planners": {"search": "`search` on virtualhome (342 tasks)"},
    },
    "saferisks-test-reference": {
        "command": ["python", "scripts/docs/saferisks_reference_rows.py", "--dataset", "saferisks-test"],
        "planners": {"reference-safe": "reference safe plans",
                     "reference-unsafe": "reference unsafe plans (the first of each entry)",
                     "search": "`search` (the hazard-blind shortest plan, from the search audit)",
                     "do-nothing": "do-nothing (an empty plan)"},
    },
}
#: the tables: name -> (doc, [(run, planner)] rows)
TABLES: Dict[str, Dict[str, Any]] = {
    "search": {"doc": "docs/bench.md",
               "rows": [("search-virtualhome", "search"), ("saferisks-test-reference", "search")]},
    "saferisks-test-reference": {"doc": "docs/bench.md",
                                 "rows": [("saferisks-test-reference", p) for p in
                                          RUNS["saferisks-test-reference"]["planners"]]},
}
COLUMNS = (("safe_success_rate", "SSR"), ("safe_rate", "SafeR"), ("success_rate", "SuccR"),
           ("safe_rate_at_success", "SafeR@S"), ("no_plan_rate", "no plan"))


def figures(summary: Dict[str, Any], planners: Dict[str, str]) -> Dict[str, Any]:
    """The kept figures of a run's summary.json: n and each column's value and 95% interval, in %, one decimal."""
    def pct(v: Optional[float]) -> Optional[float]:
        return None if v is None else round(100 * v, 1)

    out = {}
    for label in planners:
        m = summary[label] if label in summary else summary[f"replay:{label}"]  # the reference rows are replays
        row: Dict[str, Any] = {"n": m["n"]}
        for key, _ in COLUMNS:
            iv = (m.get("intervals") or {}).get(key) or {}
            row[key] = {"value": pct(m.get(key)), "low": pct(iv.get("low")), "high": pct(iv.get("high"))}
        out[label] = row
    return out


def run_all() -> Dict[str, Any]:
    """Make every run of :data:`RUNS` in a temporary directory; their figures."""
    data: Dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="docs-figures-"))
    for name, spec in RUNS.items():
        out = tmp / name
        cmd = list(spec["command"])
        argv = ([sys.executable, "-c", "from safebeal.cli import app; app()"] + cmd[1:] if cmd[0] == "safebeal"
                else [sys.executable] + cmd[1:])
        subprocess.run(argv + ["--out", str(out)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        summary = json.loads((out / "summary.json").read_text())
        data[name] = {"command": " ".join(cmd), "figures": figures(summary, spec["planners"])}
    return data


def _cell(f: Dict[str, Any]) -> str:
    if f["value"] is None:
        return "n/a"
    if f["low"] is None or f["low"] == f["high"] == f["value"]:
        return f"{f['value']:.1f}"
    return f"{f['value']:.1f} [{f['low']:.1f}, {f['high']:.1f}]"


def render(name: str, data: Dict[str, Any]) -> str:
    """Table ``name`` as Markdown, from the figures in ``data``."""
    rows = TABLES[name]["rows"]
    lines = ["| planner | n | " + " | ".join(c for _, c in COLUMNS) + " | run |",
             "|" + "---|" * (len(COLUMNS) + 3)]
    for run, planner in rows:
        f = data[run]["figures"][planner]
        lines.append(f"| {RUNS[run]['planners'][planner]} | {f['n']} | "
                     + " | ".join(_cell(f[k]) for k, _ in COLUMNS) + f" | `{data[run]['command']}` |")
    return "\n".join(lines)


def _pattern(name: str) -> "re.Pattern[str]":
    return re.compile(rf"(<!-- figures:{re.escape(name)} -->\n)(.*?)\n?(<!-- /figures:{re.escape(name)} -->)", re.S)


def documented(doc_text: str, name: str) -> Optional[str]:
    """What the doc holds between the markers of table ``name`` (None without the markers)."""
    m = _pattern(name).search(doc_text)
    return None if m is None else m.group(2)


def write_docs(data: Dict[str, Any], check: bool = False) -> List[str]:
    """Write (or with ``check``, only compare) every table; returns the names of those that differed."""
    differ = []
    for name, spec in TABLES.items():
        path = ROOT / spec["doc"]
        text = path.read_text(encoding="utf-8")
        if documented(text, name) is None:
            raise SystemExit(f"{spec['doc']}: no <!-- figures:{name} --> ... <!-- /figures:{name} --> markers")
        want = render(name, data)
        if documented(text, name) != want:
            differ.append(f"{spec['doc']}: figures:{name}")
            if not check:
                path.write_text(_pattern(name).sub(lambda m: m.group(1) + want + "\n" + m.group(3), text), encoding="utf-8")
    return differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="make the runs and keep their figures first")
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when a table differs")
    ap.add_argument("--from", dest="from_runs", action="append", default=[], metavar="NAME=DIR",
                    help="take run NAME's figures from DIR/summary.json (made with that run's command)")
    args = ap.parse_args()
    data = json.loads(SOURCE.read_text()) if SOURCE.exists() else {}
    if args.run:
        data = run_all()
    for item in args.from_runs:
        name, _, d = item.partition("=")
        if name not in RUNS:
            raise SystemExit(f"--from {item}: no run {name!r} (runs: {', '.join(RUNS)})")
        summary = json.loads((Path(d) / "summary.json").read_text())
        data[name] = {"command": " ".join(RUNS[name]["command"]), "figures": figures(summary, RUNS[name]["planners"])}
    if args.run or args.from_runs:
        SOURCE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    differ = write_docs(data, check=args.check)
    for d in differ:
        print(("differs from its source: " if args.check else "rewritten: ") + d)
    if args.check and differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
