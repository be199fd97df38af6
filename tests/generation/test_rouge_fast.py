"""The fast Rouge-L equals rouge 1.0.1 exactly; its Dice bound never undercuts it; the index prunes correctly."""

import random

import pytest
from rouge import Rouge

from safebeal.generation.rouge import RougeIndex, dice_bound, max_pairwise, pairs_at_or_above, rouge_l, tokenize

_R = Rouge(metrics=["rouge-l"])


def reference(hyp: str, ref: str):
    try:
        return _R.get_scores(hyp, ref)[0]["rouge-l"]["f"]
    except Exception as exc:  # the package raises on empty texts; ours must raise the same type
        return type(exc)


def ours(hyp: str, ref: str):
    try:
        return rouge_l(hyp, ref)
    except Exception as exc:
        return type(exc)


VOCAB = ["the", "a", "cat", "Cat", "dog.", "sat", "on", "mat,", "kitchen", "knife", "?", ".", " ", "  ", "x.y",
         "the.", "put", "Please", "fridge", "it's"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 16)))


def test_equals_rouge_package_on_random_pairs():
    rng = random.Random(1234)
    for _ in range(3000):
        h, r = _text(rng), _text(rng)
        assert ours(h, r) == reference(h, r), (h, r)


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
            assert rouge_l(h, r) == reference(h, r)


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
