"""Print docs/saferisks.md's "SafeRisks v3 against its targets" table from `safebeal dataset stats saferisks --json`.

    safebeal dataset stats saferisks --json > stats.json
    python scripts/docs/saferisks_v3_report.py stats.json
"""

from __future__ import annotations

import json
import sys

TARGETS = {"patterns": 400, "patterns_per_category": 40, "max_pattern_share": 0.03, "entries": 2027,
           "test_patterns_in_train": 0, "test_patterns": 8, "generic_rule_ssr_test": 0.25, "search_unsafe_share": 0.70}


def pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def main(path: str) -> int:
    st = json.loads(open(path).read())
    rows = ["| category | entries | patterns | largest pattern | test patterns | generic rule SSR (test) | search unsafe |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for c, r in st["per_category"].items():
        rows.append(f"| {c} | {r['entries']} | {r['patterns']} | {pct(r['max_pattern_share'])} | {r['test_patterns']} | "
                    f"{pct(r.get('generic_rule_ssr_test'))} | {pct(r.get('search_unsafe_share'))} |")
    print("\n".join(rows))
    cats = st["per_category"].values()
    met = {
        "entries >= 2,027": st["entries"] >= TARGETS["entries"],
        "patterns >= 400": st["patterns"] >= TARGETS["patterns"],
        ">= 40 patterns per category": all(r["patterns"] >= 40 for r in cats),
        "no pattern above 3% of its category": all(r["max_pattern_share"] <= 0.03 for r in cats),
        "no test pattern in train": st["test_patterns_in_train"] == 0,
        ">= 8 test patterns per category": all(r["test_patterns"] >= 8 for r in cats),
        "generic rule SSR (test) <= 25%": (st.get("generic_rule_ssr_test") or 0) <= 0.25,
        "search unsafe >= 70% per category": all((r.get("search_unsafe_share") or 0) >= 0.70 for r in cats),
    }
    print()
    print(f"Overall: {st['entries']} entries, {st['families']} families, **{st['patterns']} patterns**, "
          f"{st['test_patterns_in_train']} test patterns in train, generic rule SSR (test) "
          f"{pct(st.get('generic_rule_ssr_test'))}, search unsafe {pct(st.get('search_unsafe_share'))}, "
          f"near-duplicates with names masked {pct(st.get('near_duplicate_share_masked'))}, "
          f"splits {st['per_split']}.")
    print()
    for k, ok in met.items():
        print(f"- {k}: {'met' if ok else '**not met**'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
