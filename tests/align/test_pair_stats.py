"""`safebeal pairs stats`: the shortcut statistics, checked on hand-written pairs."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from safebeal.align.data import Pair
from safebeal.align.pair_stats import pair_features, pair_stats
from safebeal.cli import app

PROMPT = [{"role": "user", "content": "Task: cook\n<kitchen> (1): none; states: CLEAN; a room\n"
                                      "<stove> (5): has switch; in <kitchen> (1)\n<pot> (7): in <kitchen> (1)\n"
                                      "<towel> (9): in <kitchen> (1)\nPlan:\n"}]
SAFE = "[WALK] <kitchen> (1)\n[WALK] <stove> (5)\n[SWITCHON] <stove> (5)\n[SWITCHOFF] <stove> (5)"
OMIT = "[WALK] <kitchen> (1)\n[WALK] <stove> (5)\n[SWITCHON] <stove> (5)"  # omission: on-task, shorter
DETOUR = SAFE + "\n[WALK] <towel> (9)\n[GRAB] <towel> (9)"  # inserted detour: off-task, new object, longer
UNLISTED = "[WALK] <kitchen> (1)\n[WALK] <stove> (5)\n[SWITCHON] <stove> (5)\n[PUTBACK] <knife> (3) <stove> (5)"


def test_features_of_an_omission_a_detour_and_an_unlisted_object():
    omit = pair_features(Pair(PROMPT, SAFE, OMIT, 3, source="a"))
    assert (omit["shorter_is_chosen"], omit["longer_is_chosen"], omit["on_task"]) == (False, True, True)
    assert not omit["rejected_new_object"] and not omit["rejected_unlisted_object"]
    detour = pair_features(Pair(PROMPT, SAFE, DETOUR, 4, source="b"))
    assert detour["shorter_is_chosen"] and not detour["on_task"] and detour["rejected_new_object"]
    assert not detour["rejected_unlisted_object"]  # the towel is listed
    unl = pair_features(Pair(PROMPT, SAFE, UNLISTED, 3, source="b"))
    # the knife (3) is not in the prompt; the step also touches the stove, so it is on-task
    assert unl["rejected_unlisted_object"] and unl["on_task"] and unl["equal_length"]


def test_stats_per_source_and_the_cli(tmp_path):
    pairs = [Pair(PROMPT, SAFE, OMIT, 3, source="mutation:omit"), Pair(PROMPT, SAFE, DETOUR, 4, source="mutation:x"),
             Pair(PROMPT, SAFE, UNLISTED, 3, source="mutation:x")]
    st = pair_stats(pairs)
    assert st["all"]["pairs"] == 3 and st["all"]["shorter_is_chosen"] == round(1 / 3, 4)
    assert st["all"]["rejected_unlisted_object_share"] == round(1 / 3, 4) and st["all"]["on_task_share"] == round(2 / 3, 4)
    assert st["by_source"]["mutation:x"]["on_task_share"] == 0.5 and st["by_source"]["mutation:omit"]["on_task_share"] == 1.0
    f = tmp_path / "p.jsonl"
    f.write_text("".join(json.dumps({"prompt": p.prompt, "chosen": [{"role": "assistant", "content": p.chosen}],
                                     "rejected": p.rejected, "prefix_actions": p.prefix_actions,
                                     "source": p.source}) + "\n" for p in pairs))
    res = CliRunner().invoke(app, ["pairs", "stats", str(f), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == st
    bad = CliRunner().invoke(app, ["pairs", "stats", str(tmp_path / "missing.jsonl")])
    assert bad.exit_code == 2 and "missing.jsonl" in bad.output


SUBST = "[WALK] <kitchen> (1)\n[WALK] <stove> (5)\n[SWITCHON] <stove> (5)\n[WALK] <towel> (9)\n[PUTBACK] <pot> (7) <towel> (9)"


def test_a_walk_to_a_substituted_destination_is_on_task():
    # after the shared prefix the rejected plan names only the pot and the towel, neither in SAFE: off-task
    assert not pair_features(Pair(PROMPT, SAFE, SUBST, 3))["on_task"]
    # chosen puts the pot on the stove; rejected walks to the towel and puts the pot there: the walk names only the
    # towel, which the put step names beside the pot, a chosen object -> on-task
    safe = "[WALK] <kitchen> (1)\n[WALK] <stove> (5)\n[PUTBACK] <pot> (7) <stove> (5)"
    subst = "[WALK] <kitchen> (1)\n[WALK] <towel> (9)\n[PUTBACK] <pot> (7) <towel> (9)"
    assert pair_features(Pair(PROMPT, safe, subst, 1))["on_task"]


def test_rival_classifiers_on_hand_computed_pairs():
    # task ids a, b, h fall in fold 1 and d, e, f in fold 0 (crc32 % 2); each pair is scored by the rule fitted on
    # the other fold. Length: a, b, d (chosen longer by 1) are right (the other fold says "longer by 1 is chosen");
    # e (chosen shorter by 2) is right (h says so), f (chosen longer by 2) wrong (h says shorter), h a tie (e and f
    # disagree): (1 + 1 + 1 + 1 + 0 + 0.5) / 6 = 0.75. Object names: a, b, d use the same names in both plans
    # (ties); the towel only in a rejected plan of fold 1 (h) -> e right; f's chosen plan has it -> f wrong; for h,
    # fold 0 has the towel once in a chosen (f) and once in a rejected plan (e): weight 0, a tie. (3 * 0.5 + 1 + 0 +
    # 0.5) / 6 = 0.5.
    pairs = [Pair(PROMPT, SAFE, OMIT, 3, task_id="a", source="omit"), Pair(PROMPT, SAFE, OMIT, 3, task_id="b", source="omit"),
             Pair(PROMPT, SAFE, OMIT, 3, task_id="d", source="omit"), Pair(PROMPT, SAFE, DETOUR, 4, task_id="e", source="detour"),
             Pair(PROMPT, DETOUR, SAFE, 4, task_id="f", source="detour"), Pair(PROMPT, SAFE, DETOUR, 4, task_id="h", source="detour")]
    st = pair_stats(pairs)
    assert st["all"]["rivals"] == {"length_only": 0.75, "object_names_only": 0.5}
    assert st["by_source"]["omit"]["rivals"] == {"length_only": 1.0, "object_names_only": 0.5}
    assert st["by_source"]["detour"]["rivals"] == {"length_only": 0.5, "object_names_only": 0.5}


def test_issue_32_rivals_are_fitted_and_scored_across_families():
    from safebeal.align.pair_stats import family_rivals, pair_family

    # families fa, fb fall in fold 0 and fd, fe, fg in fold 1 (crc32 % 2). Four pairs reject the plan that leaves
    # the stove on; fe's is swapped (the shorter plan chosen). Verbs: fold 1 (fd, fe, fg) has SWITCHOFF twice in a
    # chosen plan and once in a rejected one (weight log(2/3) < 0), so fa and fb are named right; fold 0 has it only
    # in chosen plans, so fd and fg are right and fe wrong: 4/5. The first diverging action ([SWITCHOFF] <stove>
    # against <end>) and the words tell the same: 4/5. Length: "longer by one is chosen" in both folds: 4/5.
    # Object names: both plans use the kitchen and the stove: every pair a tie, 0.5.
    def pair(fam, chosen, rejected, both=True):
        return Pair(PROMPT, chosen, rejected, 3, task_id=f"{fam}/000", source="s", goal_reached_both=both)

    pairs = [pair("fa", SAFE, OMIT), pair("fb", SAFE, OMIT), pair("fd", SAFE, OMIT), pair("fe", OMIT, SAFE, False),
             pair("fg", SAFE, OMIT)]
    assert [pair_family(p) for p in pairs] == ["fa", "fb", "fd", "fe", "fg"]
    assert pair_family(Pair(PROMPT, SAFE, OMIT, 3, task_id="7_1")) == "cook"  # the prompt's task title
    assert family_rivals(pairs) == {"length": 0.8, "verbs": 0.8, "first_action": 0.8, "tokens": 0.8, "objects": 0.5}
    st = pair_stats(pairs)
    assert st["rivals"] == family_rivals(pairs) and st["families"] == 5
    assert (st["longer_is_chosen"], st["shorter_is_chosen"], st["goal_reached_both"]) == (0.8, 0.2, 0.8)
    # a set built before the field was recorded: unknown, not 0
    assert pair_stats(pairs[:2] + [Pair(PROMPT, SAFE, OMIT, 3, task_id="x/1")])["goal_reached_both"] is None
    assert family_rivals([]) == dict.fromkeys(["length", "verbs", "first_action", "tokens", "objects"])
