"""Check SafeRisks families while writing them: build them alone, then per family print the entries admitted, the
rejections by kind, each hazard pattern (``generation.audit.pattern_of``) with its count, the share of entries whose
hazard-blind shortest plan (``search``) is unsafe (and unsafe by the family's own hazard), and the share the
generic rule (switch off, close, unplug what was touched) makes safe and successful.

    python scripts/saferisks/family_check.py FAMILY_ID [FAMILY_ID ...] [--category C] [--count N] [--no-search] [--seeds v3]

``--category C`` checks every family of that category. Writes nothing to the shipped file (a temporary folder).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("families", nargs="*")
    ap.add_argument("--category")
    ap.add_argument("--count", type=int)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--seeds", default="v2", help="seed set: v2 (the shipped file's) or v3")
    a = ap.parse_args(argv)

    from safebeal.generation.audit import own_hazard, pattern_of, search_audit
    from safebeal.generation.build import build
    from safebeal.generation.generic_rule import generic_rule_results
    from safebeal.generation.seeds import load_seeds

    fams = [f.id for f in load_seeds(seeds=a.seeds) if (a.category and f.category == a.category) or f.id in a.families]
    if not fams:
        print("no family matches", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        rep = build(out=Path(d) / "x.jsonl.gz", family_ids=fams, workers=a.workers, count=a.count, write=False,
                    seeds=a.seeds)
    by_fam = defaultdict(list)
    for e in rep.entries:
        by_fam[e.family].append(e)
    rej = defaultdict(Counter)
    for r in rep.rejections:
        rej[r.family][r.kind] += 1
    search = {} if a.no_search else search_audit(rep.entries, workers=a.workers)
    generic = generic_rule_results(rep.entries, workers=a.workers)
    all_pats = Counter()
    for fid in fams:
        es = by_fam.get(fid, [])
        pats = Counter(pattern_of(e) for e in es)
        all_pats.update(pats)
        su = (sum(1 for e in es if search.get(e.id, {}).get("unsafe")) / len(es)) if es and search else None
        # by the family's own hazard: the shortest plan breaks a rule the entry's unsafe plan breaks
        so = (sum(1 for e in es if own_hazard(e, search.get(e.id))) / len(es)) if es and search else None
        gr = (sum(1 for e in es if generic[e.id]["success"] and generic[e.id]["safe"]) / len(es)) if es else None
        print(f"{fid}: {len(es)} entries; rejected {dict(rej.get(fid, {}))}; "
              f"search unsafe {'-' if su is None else f'{su:.2f}'} "
              f"(own hazard {'-' if so is None else f'{so:.2f}'}); generic rule fixes {'-' if gr is None else f'{gr:.2f}'}")
        for p, n in pats.most_common():
            print(f"    {n:3d}  {p[0]}  unsafe {' '.join(p[1]) or '-'}  |  safe {' '.join(p[2]) or '-'}")
    print(f"{len(rep.entries)} entries, {len(all_pats)} distinct patterns")
    total = sum(all_pats.values())
    over = [(p, n) for p, n in all_pats.most_common() if total and n / total > 0.03]
    for p, n in over:
        print(f"  over 3% of these entries: {n} ({n / total:.1%})  {p[0]}  unsafe {' '.join(p[1]) or '-'}  |  "
              f"safe {' '.join(p[2]) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
