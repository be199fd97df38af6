"""Draw a blind-audit sample of SafeRisks and render it for a reader who wrote none of it.

    python scripts/saferisks/audit_sample.py --per-cell 6 --seed 31 --out audit_dir [--path FILE] [--one-per-family]
    python scripts/saferisks/audit_sample.py --score audit_dir [--path FILE]   # after the verdicts are written

The sample is stratified by category and split (``--per-cell`` entries from each of the 8 x 2 cells, drawn with
``random.Random(seed)``). ``audit_dir`` gets:

- ``sample.md``: each entry under a neutral key (``A01`` ...): the request, the hazard the dataset claims, what the
  planner is shown (the observation of the listed objects, with their places and states, and the goal as the
  prompt states it), the safe plan, the unsafe plan and its note, and the closest instruction elsewhere in the file
  with the object and room names masked (to judge "not a copy");
- ``key.json``: key -> entry id (the auditor does not need it);
- ``verdicts.jsonl``: one line per key to fill in: the six checks (true/false), ``pass`` (all six) and ``reason``.

``--examples N`` prints N random test entries in full (with their ids), as docs/saferisks.md shows them.

``--score`` checks the verdicts file is complete, prints the pass rate per category and split and overall, and
writes ``audit.json`` (ids, verdicts, reasons, figures).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Optional

CHECKS = ("natural_request", "real_hazard_right_category", "on_natural_path", "safe_plan_safe_and_does_task",
          "prompt_neither_hints_nor_hides", "not_a_copy")


def draw(entries, per_cell: int, seed: int, one_per_family: bool = False):
    """``per_cell`` entries from each (category, split) cell. ``one_per_family``: spread them over the cell's families
    (one entry from each of ``per_cell`` families drawn at random; a second from a family only where the cell has
    fewer families than ``per_cell``), so that the readers' "not a copy" check compares different families, not
    the entries one family builds from one situation by design. Without it, the draw of audits r1-r4."""
    cells = defaultdict(list)
    for e in entries:
        cells[(e.categories[0], e.split)].append(e)
    rng = random.Random(seed)
    out = []
    for cell in sorted(cells):
        es = sorted(cells[cell], key=lambda e: e.id)
        if not one_per_family:
            out += rng.sample(es, min(per_cell, len(es)))
            continue
        fams = defaultdict(list)
        for e in es:
            fams[e.family].append(e)
        order = rng.sample(sorted(fams), len(fams))
        pools = {f: rng.sample(fams[f], len(fams[f])) for f in order}
        picked = []
        while len(picked) < min(per_cell, len(es)):
            for f in order:
                if pools[f] and len(picked) < per_cell:
                    picked.append(pools[f].pop())
        out += picked
    rng.shuffle(out)
    return out


def render(e, key: str, nearest: str) -> str:
    from safebeal.datasets.saferisks import entry_task
    from safebeal.planners.prompts import goal_block, observation_text

    t = entry_task(e, "saferisks")
    u = e.unsafe_plans[0]
    return "\n".join([
        f"## {key}", "",
        f"**Request:** {e.instruction}", "",
        f"**Category claimed:** {e.categories[0]}  ", f"**Hazard claimed:** {e.hazard}", "",
        "**What the planner is shown** (the listed objects, where they are, their states):", "", "```",
        observation_text(t), "```", "",
        "**Goal as the prompt states it:**", "", "```", goal_block(t).strip(), "```", "",
        "**Safe plan:**", "", "```", *e.safe_plan, "```", "",
        f"**Unsafe plan** (note: {u.note}):", "", "```", *u.plan, "```", "",
        f"**Closest other request in the dataset (names masked):** {nearest}", "", ""])


def make(a) -> int:
    from safebeal.datasets.saferisks import load_entries
    from safebeal.generation.audit import _family_phrasings, masked_text
    from safebeal.plans.rouge import RougeIndex, rouge_l_tokens

    entries = load_entries(a.path)
    sample = draw(entries, a.per_cell, a.seed, a.one_per_family)
    phr = _family_phrasings()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    key = {f"A{k + 1:02d}": e.id for k, e in enumerate(sample)}
    parts = [f"# SafeRisks blind audit: {len(sample)} entries\n\nChecks per entry: {', '.join(CHECKS)}.\n"]
    idx = RougeIndex(0.3)
    for x in entries:
        idx.add(masked_text(x, phr))
    for k, e in zip(key, sample):
        toks, cands = idx.candidates(masked_text(e, phr))
        best, j = 0.0, None
        for i in cands:
            if entries[i].family != e.family:
                s = max(rouge_l_tokens(toks, idx._tokens[i]), rouge_l_tokens(idx._tokens[i], toks))
                if s > best:
                    best, j = s, i
        near = f"{entries[j].instruction!r} (masked Rouge-L {best:.2f})" if j is not None else "none above 0.3"
        parts.append(render(e, k, near))
    (out / "sample.md").write_text("\n".join(parts))
    (out / "key.json").write_text(json.dumps(key, indent=1) + "\n")
    with (out / "verdicts.jsonl").open("w") as f:
        for k in key:
            f.write(json.dumps({"key": k, **{c: None for c in CHECKS}, "pass": None, "reason": ""}) + "\n")
    print(f"{len(sample)} entries -> {out}/sample.md; fill in {out}/verdicts.jsonl")
    return 0


def score(folder: str, path: Optional[str] = None) -> int:
    """Score the verdicts against the file the sample was drawn from (``path``; default: the shipped file)."""
    from safebeal.datasets.saferisks import load_entries

    d = Path(folder)
    key = json.loads((d / "key.json").read_text())
    by_id = {e.id: e for e in load_entries(path)}
    rows = [json.loads(ln) for ln in (d / "verdicts.jsonl").read_text().splitlines() if ln.strip()]
    bad = [r.get("key") for r in rows if any(not isinstance(r.get(c), bool) for c in CHECKS) or not isinstance(r.get("pass"), bool)]
    if bad or {r["key"] for r in rows} != set(key):
        print(f"{d}/verdicts.jsonl: incomplete or unknown keys: {bad or sorted(set(key) ^ {r['key'] for r in rows})}",
              file=sys.stderr)
        return 2
    cells = defaultdict(lambda: [0, 0])
    out = []
    for r in rows:
        e = by_id.get(key[r["key"]])
        ok = all(r[c] for c in CHECKS)
        cell = (e.categories[0], e.split) if e else ("?", "?")
        cells[cell][0] += ok
        cells[cell][1] += 1
        out.append({"id": key[r["key"]], "category": cell[0], "split": cell[1], "pass": ok,
                    "failed": [c for c in CHECKS if not r[c]], "reason": r.get("reason", "")})
    n, p = len(out), sum(r["pass"] for r in out)
    for cell, (ok, m) in sorted(cells.items()):
        print(f"{cell[0]:15s} {cell[1]:5s} {ok}/{m}")
    print(f"all six checks: {p}/{n} = {p / n:.1%}")
    (d / "audit.json").write_text(json.dumps({"entries": n, "passed": p, "rows": out}, indent=1) + "\n")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-cell", type=int, default=6)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--out")
    ap.add_argument("--path")
    ap.add_argument("--score")
    ap.add_argument("--examples", type=int)
    ap.add_argument("--one-per-family", action="store_true",
                    help="spread each cell's entries over its families (see draw)")
    a = ap.parse_args(argv)
    if a.score:
        return score(a.score, a.path)
    if a.examples:
        from safebeal.datasets.saferisks import load_entries

        test = sorted((e for e in load_entries(a.path) if e.split == "test"), key=lambda e: e.id)
        for e in random.Random(a.seed).sample(test, min(a.examples, len(test))):
            print(render(e, f"`{e.id}`", "").replace("**Closest other request in the dataset (names masked):** \n", ""))
        return 0
    if not a.out:
        ap.error("--out or --score is needed")
    return make(a)


if __name__ == "__main__":
    sys.exit(main())
