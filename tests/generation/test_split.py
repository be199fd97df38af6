"""SafeRisks v3's split by hazard pattern (safebeal.generation.split)."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace as NS

from safebeal.generation.audit import pattern_of
from safebeal.generation.procedural import SPLIT_SALT
from safebeal.generation.seeds import HazardSeed, RoleSpec, UnsafeSpec
from safebeal.generation.split import family_groups, family_skeleton, pattern_split


def fam(fid, safe, unsafe, roles=("pan", "stove", "food"), category="fire_heat", rule="fire_heat.heat_source_left_on"):
    return HazardSeed.model_construct(id=fid, category=category, roles={r: RoleSpec(use=["table"]) for r in roles}, safe=safe,
                                      unsafe=[UnsafeSpec(rule=rule, note="n", plan=unsafe)])


def entry(family, safe, unsafe, rule="fire_heat.heat_source_left_on", i=0):
    return NS(id=f"{family}/{i:03d}", family=family, safe_plan=[f"[{v}] <x> (1)" for v in safe],
              unsafe_plans=[NS(rule_id=rule, plan=[f"[{v}] <x> (1)" for v in unsafe])], categories=["fire_heat"])


def test_a_skeleton_names_roles_in_order_of_first_use():
    f = fam("a", ["take food", "put food INSIDE pan", "SWITCHON stove", "SWITCHOFF stove"],
            ["take food", "put food INSIDE pan", "SWITCHON stove"])
    assert family_skeleton(f) == ("fire_heat", ("take A", "put A INSIDE B", "SWITCHON C", "SWITCHOFF C"),
                                  ("take A", "put A INSIDE B", "SWITCHON C"))
    # other role names, same shape: the same skeleton; an ON where the other says INSIDE: another
    g = fam("b", ["take bread", "put bread INSIDE toaster", "SWITCHON toaster", "SWITCHOFF toaster"],
            ["take bread", "put bread INSIDE toaster", "SWITCHON toaster"], roles=("bread", "toaster"))
    assert family_skeleton(g)[1] == ("take A", "put A INSIDE B", "SWITCHON B", "SWITCHOFF B")
    h = fam("c", ["take food", "put food ON pan", "SWITCHON stove", "SWITCHOFF stove"],
            ["take food", "put food ON pan", "SWITCHON stove"])
    assert family_skeleton(h) != family_skeleton(f)


def test_families_sharing_a_pattern_or_a_skeleton_are_one_group_and_one_side():
    left_on = (["GRAB", "PUTIN", "SWITCHON", "SWITCHOFF"], ["GRAB", "PUTIN", "SWITCHON"])  # ((), (SWITCHOFF,))
    fams = [fam(f"f{i}", [f"SWITCHON stove", f"X{i} pan"], [f"Y{i} pan"]) for i in range(6)]
    fams.append(fam("f6", ["SWITCHON stove", "X0 pan"], ["Y0 pan"]))  # f0's skeleton
    es = [entry("f0", *left_on), entry("f1", *left_on),  # f0 and f1 share a pattern
          entry("f2", ["GRAB", "WIPE"], ["GRAB"]), entry("f3", ["OPEN", "CLOSE"], ["OPEN"]),
          entry("f4", ["SWITCHOFF", "PUTBACK"], ["PUTBACK", "SWITCHOFF"]), entry("f5", ["A", "B"], ["B", "A"]),
          entry("f6", ["Q"], ["R"])]
    # a switch-off left out before another step is f0's pattern too: prefix and suffix are trimmed
    assert pattern_of(entry("g", ["SWITCHOFF", "PUTBACK"], ["PUTBACK"])) == pattern_of(es[0])
    groups = family_groups(es, fams)
    assert groups == [["f0", "f1", "f6"], ["f2"], ["f3"], ["f4"], ["f5"]]
    for fraction, minimum in [(0.25, 1), (0.25, 3), (0.5, 8)]:
        test = pattern_split(es, fams, fraction, minimum)
        train_pats = {pattern_of(e) for e in es if e.family not in test}
        assert not {pattern_of(e) for e in es if e.family in test} & train_pats
        assert all(set(g) <= test or not set(g) & test for g in groups)
        assert 0 < len(test) and sum(e.family in test for e in es) <= len(es) / 2  # never more than half
    # groups ranked by the salted hash of their first family: f3, f4, f0 (f0, f1, f6), f2, f5. One pattern and 25% of
    # 7 entries (1.75) wanted: f3 (1 entry), then f4 (2 entries, 2 patterns), and no more
    ranked = sorted([g[0] for g in groups], key=lambda f: hashlib.sha256(f"{SPLIT_SALT}:{f}".encode()).hexdigest())
    assert ranked == ["f3", "f4", "f0", "f2", "f5"]
    assert pattern_split(es, fams, 0.25, 1) == {"f3", "f4"}
    # 3 patterns wanted: the 3-family group (3 entries) is next, but 2 + 3 > half of 7; f2 comes instead
    assert pattern_split(es, fams, 0.25, 3) == {"f3", "f4", "f2"}


def test_the_shipped_entries_split_by_pattern_leave_no_test_pattern_in_train():
    from safebeal.datasets.saferisks import load_entries
    from safebeal.generation.seeds import load_seeds

    es, fams = load_entries(), load_seeds()
    test = pattern_split(es, fams, 0.25, 8)
    assert test and not ({pattern_of(e) for e in es if e.family in test} & {pattern_of(e) for e in es if e.family not in test})
    sk = {family_skeleton(f) for f in fams if f.id in test}
    assert not sk & {family_skeleton(f) for f in fams if f.id not in test and f.id in {e.family for e in es}}


def test_a_phrasing_that_near_duplicates_an_earlier_familys_is_never_drawn():
    from safebeal.generation.build import clashing_templates

    def f(fid, phrasings):
        return HazardSeed.model_construct(id=fid, phrasings=phrasings)

    fams = [f("a", ["fry the {food} in the {pan}", "wipe the {table}"]),
            f("b", ["chop this up", "fry the {meat} in the {pot}"]),  # its second is a's first, names masked
            f("c", ["fry the {x} in the {y}", "scrub the {bench} until it shines"])]
    # b's 1 clashes with a's 0; c's 0 with both a's 0 and b's 1; c's 1 against a's 1: "scrub the X until it shines"
    # against "wipe the X" shares "the X": Rouge-L 2 * (2/6 * 2/3) / (2/6 + 2/3) = 0.444, below 0.7
    assert clashing_templates(fams, 0.7) == {"a": frozenset(), "b": frozenset({1}), "c": frozenset({0})}
