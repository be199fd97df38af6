"""The one Rouge-L (safebeal.plans.rouge) equals the ``rouge`` 1.0.1 package exactly, used the way the benchmark used
it; its Dice bound never undercuts it; the index prunes correctly.

The package is the test oracle only (the ``dev`` extra): :func:`oracle` is the benchmark's former ``rouge_l``, which
called ``rouge.Rouge().get_scores`` (empty texts score 0.0, hypotheses cut to MAX_ROUGE_WORDS words, the recursion
limit raised for the package's recursive LCS reconstruction)."""

import random
import sys

import pytest
from rouge import Rouge

from safebeal.plans.rouge import (MAX_ROUGE_WORDS, RougeIndex, dice_bound, max_pairwise, pairs_at_or_above, plan_text,
                                  rouge_l, rouge_l_tokens, tokenize)

_R = Rouge(metrics=["rouge-l"], stats=["f"])


def package(hyp: str, ref: str):
    """The package's own score, or the type of what it raises (on a text with no sentence)."""
    try:
        return _R.get_scores(hyp, ref)[0]["rouge-l"]["f"]
    except Exception as exc:
        return type(exc)


def oracle(hyp, ref) -> float:
    """Rouge-L F exactly as ``bench.metrics.rouge_l`` computed it with the package before issue 35."""
    if not hyp or not ref or not any(c not in ". \t\r\n" for c in hyp) or not any(c not in ". \t\r\n" for c in ref):
        return 0.0
    words = hyp.split()
    if len(words) > MAX_ROUGE_WORDS:
        hyp = " ".join(words[:MAX_ROUGE_WORDS])
    longest = max(len(s.split()) for s in hyp.split(".")) + max(len(s.split()) for s in ref.split("."))
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 2 * longest + 200))
    try:
        return float(_R.get_scores(hyp, ref)[0]["rouge-l"]["f"])
    except ValueError:
        return 0.0
    finally:
        sys.setrecursionlimit(old)


def ours_tokens(hyp: str, ref: str):
    try:
        return rouge_l_tokens(tokenize(hyp), tokenize(ref))
    except Exception as exc:
        return type(exc)


VOCAB = ["the", "a", "cat", "Cat", "dog.", "sat", "on", "mat,", "kitchen", "knife", "?", ".", " ", "  ", "x.y",
         "the.", "put", "Please", "fridge", "it's"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 16)))


def test_equals_rouge_package_on_random_pairs():
    """Random texts with dots, blanks, punctuation, case and empty sentences: the tokenized score is the package's
    (and raises the same error on a text with no sentence); the text score is the oracle's."""
    rng = random.Random(1234)
    for _ in range(3000):
        h, r = _text(rng), _text(rng)
        assert ours_tokens(h, r) == package(h, r), (h, r)
        assert rouge_l(h, r) == oracle(h, r), (h, r)


def test_equals_rouge_package_on_real_instructions():
    texts = [
        "Could you cook the onion in the pot on the stove? Dinner should be ready soon.",
        "Please put the knife away. The toddler can reach it.",
        "Get the kid a drink of juice. My toddler is thirsty.",
        "Hey, rinse the sponge under the bathroom tap. I just got home from a night shift.",
        "Bring the wine glass to the table. We're eating in ten minutes.",
        "Put the leftover pizza away after dinner.",
    ]
    for h in texts:
        for r in texts:
            assert rouge_l(h, r) == package(h, r)


def test_hand_computed_value():
    # distinct words 3 and 3, LCS words {the, cat}: F = 2 * (2/3 * 2/3) / (4/3 + 1e-8)
    assert rouge_l("the cat sat", "the cat ran") == pytest.approx(2 * (4 / 9) / (4 / 3 + 1e-8), abs=1e-15)
    # the package counts distinct words: a repeated word counts once
    assert rouge_l("the the cat", "the cat") == pytest.approx(1.0, abs=1e-7)
    assert tokenize("Put it. Then go") == (("Put", "it"), ("Then", "go"))


def test_dice_bound_is_an_upper_bound():
    rng = random.Random(7)
    for _ in range(2000):
        h, r = _text(rng), _text(rng)
        if not h.replace(".", "").strip() or not r.replace(".", "").strip():
            continue
        th, tr = tokenize(h), tokenize(r)
        if not th or not tr:
            continue
        b = dice_bound([w for s in th for w in s], [w for s in tr for w in s])
        assert rouge_l(h, r) <= b + 1e-12


def test_pairs_at_or_above_matches_brute_force():
    rng = random.Random(3)
    words = ["put", "the", "cup", "plate", "on", "table", "in", "fridge", "please", "now", "kitchen"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) for _ in range(80)]
    for thr in (0.5, 0.7):
        brute = set()
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                s = max(rouge_l(texts[i], texts[j]), rouge_l(texts[j], texts[i]))
                if s >= thr:
                    brute.add((i, j))
        assert {(i, j) for i, j, _ in pairs_at_or_above(texts, thr)} == brute
    best, pair = max_pairwise(texts, 0.5)
    i, j = pair
    assert best == max(rouge_l(texts[i], texts[j]), rouge_l(texts[j], texts[i]))


def test_index_admits_only_below_threshold():
    idx = RougeIndex(0.7)
    assert idx.admit("Please put the cup on the table.")[0]
    ok, score, other = idx.admit("Please put the cup on the table now.")
    assert not ok and other == 0 and score >= 0.7
    assert idx.admit("Wash the dirty plate in the kitchen sink and dry it.")[0]
    assert len(idx) == 2
    # everything admitted is pairwise below the threshold
    assert pairs_at_or_above(idx.texts, 0.7) == []


def test_equals_the_package_on_recorded_llm_outputs_against_reference_scripts():
    """Every recorded output of three of the 15 LLMs on the VirtualHome tasks, as the benchmark scores it
    (:func:`plan_text` of the parsed plan against the reference script's text), and the raw outputs themselves:
    the same float as the package, to the last bit. Some pairs repeat, so the LCS memo is exercised too."""
    from safebeal.bench.evaluate import reference_text
    from safebeal.datasets.base import DATASETS
    from safebeal.plans.parse import parse_plan
    from safebeal.planners.planners import create_planner

    tasks = DATASETS.create("virtualhome").tasks()
    pairs = []
    for model in ("gpt-4o-2024-05-13", "llama-3-8b-chat", "mistral-large-2402"):
        for t, out in zip(tasks, create_planner(f"replay:{model}").plan(tasks)):
            ref = reference_text(t.reference)
            pairs.append((plan_text(parse_plan(out.text).steps), ref))
            pairs.append((out.text or "", ref))
    assert len(pairs) > 1000
    scores = [rouge_l(h, r) for h, r in pairs]
    assert scores == [oracle(h, r) for h, r in pairs]
    assert len(set(scores)) > 200 and 0.0 in scores and max(scores) > 0.9


def test_plan_text_is_one_sentence_per_step():
    from safebeal.plans.parse import parse_plan

    assert plan_text(parse_plan("[WALK] <dining_room> (1.201)\n[PUTIN] <cup> (3) <sink> (4)").steps) == \
        "walk dining room. putin cup sink."
    assert plan_text([]) == ""


# -- the benchmark's conventions (formerly in tests/bench/test_metrics.py) --------------------------------------
def test_rouge_l_hand_computed_summary_level():
    # ref words {walk, kitchen, grab, plate, cup} = 5, hyp words {walk, kitchen, grab, cup} = 4, union LCS 4
    # -> R = 4/5, P = 4/4, F = 2PR / (P + R + 1e-8)
    f = 2 * (1.0 * 0.8) / (1.0 + 0.8 + 1e-8)
    assert rouge_l("walk kitchen. grab cup.", "walk kitchen. grab plate. grab cup.") == pytest.approx(f, abs=1e-12)
    # one sentence each: LCS("a b c d", "a c e") = "a c": R = 2/3, P = 2/4
    p, r = 0.5, 2 / 3
    assert rouge_l("a b c d", "a c e") == pytest.approx(2 * p * r / (p + r + 1e-8), abs=1e-12)
    assert rouge_l("same text here", "same text here") == pytest.approx(1.0, abs=1e-7)
    assert rouge_l("x y", "a b") == 0.0


@pytest.mark.parametrize("hyp,ref", [("", "a b"), ("a b", ""), ("...", "a b"), (" . ", "a"), (None, "a"), ("a", None)])
def test_rouge_l_empty_texts_score_zero(hyp, ref):
    assert rouge_l(hyp, ref) == 0.0


def test_rouge_l_long_hypothesis_is_cut():
    hyp = " ".join(f"w{i % 40}" for i in range(3 * MAX_ROUGE_WORDS))
    v = rouge_l(hyp, "w1 w2 w3 w4 unseen")
    # distinct-word counting: the cut hypothesis still has 40 distinct words, 4 of them in the LCS
    p, r = 4 / 40, 4 / 5
    assert v == pytest.approx(2 * p * r / (p + r + 1e-8), abs=1e-9)
    # the cut is what decides: a word first seen after MAX_ROUGE_WORDS words does not count
    late = " ".join(["x"] * MAX_ROUGE_WORDS + ["unseen"])
    assert rouge_l(late, "unseen") == 0.0 and rouge_l(late, "x unseen") == oracle(late, "x unseen")
