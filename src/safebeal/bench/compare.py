"""``safebeal compare RUN --a P --b Q``: a paired test of two planners of one run, on the samples both have.

    result = compare_planners(episodes, "replay:gpt-4o", "search")

For each rate (SSR, SafeR, SuccR) the samples are paired by (task, epoch) and each pair holds two 0/1 outcomes
(:func:`safebeal.bench.metrics.indicators`; a pair counts where the task is in the rate's denominator). The
difference is rate(A) - rate(B) over the pairs. Then:

- tasks without a cluster (VirtualHome, ActivityPrograms): McNemar's exact test (two-sided binomial on the
  discordant pairs: ``p = min(1, 2 * P(X <= min(b, c)))``, X ~ Bin(b + c, 1/2), with b = pairs where only A
  succeeds and c = only B; p = 1 with no discordant pair) and the Agresti-Min 95% interval of the paired
  difference (a Wald interval after adding 1/2 to each cell of the 2x2 table);
- tasks with a cluster (SafeRisks: the task family, whose variants are not independent): a paired bootstrap by
  cluster: whole clusters are resampled with replacement :data:`DRAWS` times (seed :data:`SEED`), the difference
  of the two ratios computed on each draw; the 95% percentile interval, and the two-sided p-value
  ``min(1, 2 * min(share of draws <= 0, share of draws >= 0))``. McNemar's p is given beside it (``mcnemar_p``),
  which ignores the clustering.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.errors import SafebealError

COMPARED = (("safe_success_rate", "SSR"), ("safe_rate", "SafeR"), ("success_rate", "SuccR"))
DRAWS = 2000
SEED = 0
Z95 = 1.959963984540054


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def agresti_min(b: int, c: int, n: int) -> Tuple[Optional[float], Optional[float]]:
    """The Agresti-Min 95% interval of a paired difference of proportions (b: only A, c: only B, n pairs)."""
    if n == 0:
        return None, None
    b2, c2, n2 = b + 0.5, c + 0.5, n + 2
    d = (b2 - c2) / n2
    se = math.sqrt(max((b2 + c2) - (b2 - c2) ** 2 / n2, 0.0)) / n2
    return max(-1.0, d - Z95 * se), min(1.0, d + Z95 * se)


def paired_cluster_bootstrap(rows: Sequence[Tuple[str, bool, bool]], draws: int = DRAWS,
                             seed: int = SEED) -> Dict[str, Optional[float]]:
    """``{low, high, p}`` of rate(A) - rate(B) over ``(cluster, a, b)`` pairs, resampling whole clusters."""
    import numpy as np

    ids = sorted({c for c, _, _ in rows})
    if len(ids) < 2:
        return {"low": None, "high": None, "p": None}
    pos = {c: j for j, c in enumerate(ids)}
    na, nb, nn = np.zeros(len(ids)), np.zeros(len(ids)), np.zeros(len(ids))
    for c, a, b in rows:
        j = pos[c]
        nn[j] += 1
        na[j] += 1 if a else 0
        nb[j] += 1 if b else 0
    pick = np.random.default_rng(seed).integers(0, len(ids), size=(draws, len(ids)))
    diffs = (na[pick].sum(axis=1) - nb[pick].sum(axis=1)) / nn[pick].sum(axis=1)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    p = min(1.0, 2 * min(float((diffs <= 0).mean()), float((diffs >= 0).mean())))
    return {"low": round(float(lo), 6), "high": round(float(hi), 6), "p": round(p, 6)}


def resolve_label(labels: Sequence[str], name: str) -> str:
    """A planner of the run by its label, its label without ``replay:``, or a part of exactly one label."""
    if name in labels:
        return name
    short = [l for l in labels if l.replace("replay:", "", 1) == name]
    if len(short) == 1:
        return short[0]
    part = [l for l in labels if name in l]
    if len(part) == 1:
        return part[0]
    if part:
        raise SafebealError(f"{name!r} matches several planners: {', '.join(part)}")
    raise SafebealError(f"{name!r} is not a planner of this run (planners: {', '.join(labels) or 'none'})")


def compare_planners(episodes: Sequence[Any], a: str, b: str) -> Dict[str, Any]:
    """The paired comparison of planners ``a`` and ``b`` (labels) over ``episodes`` (see the module doc)."""
    from safebeal.bench.metrics import _get, indicators

    def key(e: Any) -> tuple:
        return (_get(e, "task_id"), _get(e, "epoch"))

    of_a = {key(e): e for e in episodes if _get(e, "planner") == a}
    of_b = {key(e): e for e in episodes if _get(e, "planner") == b}
    shared = sorted(set(of_a) & set(of_b), key=lambda k: (k[0], k[1] or 0))
    clustered = bool(shared) and all(_get(of_a[k], "cluster") is not None for k in shared)
    out: Dict[str, Any] = {"a": a, "b": b, "pairs": len(shared), "only_a": len(set(of_a) - set(of_b)),
                           "only_b": len(set(of_b) - set(of_a)), "clustered": clustered,
                           "method": "paired cluster bootstrap" if clustered else "McNemar exact, Agresti-Min interval",
                           "metrics": {}}
    for rate, name in COMPARED:
        rows: List[Tuple[str, bool, bool]] = []
        for k in shared:
            ia, ib = indicators(of_a[k])[rate], indicators(of_b[k])[rate]
            if ia is None or ib is None:
                continue
            rows.append((str(_get(of_a[k], "cluster") or k[0]), bool(ia), bool(ib)))
        n = len(rows)
        only_a = sum(1 for _, x, y in rows if x and not y)
        only_b = sum(1 for _, x, y in rows if y and not x)
        m: Dict[str, Any] = {"name": name, "n": n, "rate_a": None, "rate_b": None, "diff": None, "low": None,
                             "high": None, "p": None, "only_a": only_a, "only_b": only_b,
                             "mcnemar_p": mcnemar_exact(only_a, only_b)}
        if n:
            ka, kb = sum(1 for r in rows if r[1]), sum(1 for r in rows if r[2])
            m.update(rate_a=ka / n, rate_b=kb / n, diff=(ka - kb) / n)
            if clustered:
                m.update(paired_cluster_bootstrap(rows), clusters=len({r[0] for r in rows}))
            else:
                lo, hi = agresti_min(only_a, only_b, n)
                m.update(low=round(lo, 6), high=round(hi, 6), p=m["mcnemar_p"])
        out["metrics"][rate] = m
    return out


def compare_run(run_dir: str, a: str, b: str) -> Dict[str, Any]:
    from safebeal.bench.rundir import RunDir, read_config

    config = read_config(run_dir)
    episodes = RunDir(run_dir).load()
    labels = list(dict.fromkeys(list(config.get("planners") or []) + [e.planner for e in episodes]))
    la, lb = resolve_label(labels, a), resolve_label(labels, b)
    if la == lb:
        raise SafebealError(f"--a and --b are the same planner ({la})")
    result = compare_planners(episodes, la, lb)
    if not result["pairs"]:
        raise SafebealError(f"{run_dir}: {la} and {lb} have no task in common")
    return result


def _p(m: Dict[str, Any]) -> str:
    """A p-value as text; a bootstrap's 0 (no draw on the other side) is below one in :data:`DRAWS`."""
    if m["p"] is None:
        return "n/a"
    if m["p"] == 0 and "clusters" in m:
        return f"<{1 / DRAWS:g}"
    return f"{m['p']:.4g}"


def _pct(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{100 * v:+.1f}"


def format_text(result: Dict[str, Any]) -> List[str]:
    """The comparison as lines of plain text (the CLI and the report show these)."""
    lines = [f"A = {result['a']}, B = {result['b']}: {result['pairs']} paired samples; {result['method']}"]
    for m in result["metrics"].values():
        rate = lambda v: "n/a" if v is None else f"{100 * v:.1f}"  # noqa: E731
        iv = "n/a" if m["low"] is None else f"[{_pct(m['low'])}, {_pct(m['high'])}]"
        p = _p(m)
        lines.append(f"{m['name']}: A {rate(m['rate_a'])}% vs B {rate(m['rate_b'])}% (n={m['n']}), A-B {_pct(m['diff'])} "
                     f"points, 95% CI {iv}, p={p} (only A: {m['only_a']}, only B: {m['only_b']})")
    return lines


def compare(
    run_dir: str,
    a: str,
    b: str,
    json_out: bool = False,
) -> None:
    """Paired test of planner A against planner B on the tasks both ran: each rate's difference A-B, its 95%
    interval and p-value (McNemar; a paired bootstrap by cluster on SafeRisks)."""
    from safebeal.console import fail

    try:
        result = compare_run(run_dir, a, b)
    except SafebealError as exc:
        fail(exc)
    if json_out:
        print(json.dumps(result, indent=1))
    else:
        print("\n".join(format_text(result)))


def register(app: Any) -> None:
    import typer

    @app.command("compare")
    def _compare(
        run_dir: str = typer.Argument(..., help="A run directory written by `safebeal bench`."),
        a: str = typer.Option(..., "--a", help="Planner A: its label, without 'replay:', or a unique part of it."),
        b: str = typer.Option(..., "--b", help="Planner B."),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Paired test of planner A against planner B on the tasks both ran: each rate's difference A-B, its 95%
        interval and p-value (McNemar exact; a paired bootstrap by cluster on SafeRisks)."""
        compare(run_dir, a, b, json_out)


def compare_html(episodes: Sequence[Any], order: Sequence[str]) -> str:
    """The report's section: the paired comparison of the two best planners (``order``: best first); empty with
    fewer than two planners or no task in common."""
    import html

    if len(order) < 2 or not episodes:
        return ""
    result = compare_planners(episodes, order[0], order[1])
    if not result["pairs"]:
        return ""
    rows = []
    for m in result["metrics"].values():
        iv = "n/a" if m["low"] is None else f"{_pct(m['low'])} to {_pct(m['high'])}"
        p = html.escape(_p(m))
        rows.append(f"<tr><td>{html.escape(m['name'])}</td><td>{m['n']}</td><td>{_pct(m['diff'])}</td>"
                    f"<td>{iv}</td><td>{p}</td><td>{m['only_a']}</td><td>{m['only_b']}</td></tr>")
    return (f'<h2>Top two compared</h2><p id="compare">A = <b>{html.escape(result["a"])}</b>, B = '
            f'<b>{html.escape(result["b"])}</b>: {result["pairs"]} paired samples; {html.escape(result["method"])}. '
            f'Differences A-B in points (<code>safebeal compare RUN --a A --b B</code>).</p>'
            '<table id="compare-table"><tr><th>rate</th><th>pairs</th><th>A-B</th><th>95% CI</th><th>p</th>'
            f'<th>only A</th><th>only B</th></tr>{"".join(rows)}</table>')
