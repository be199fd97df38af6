"""Study v2 part A's pieces (``experiments/study_v2_synthetic/synthetic_plans.py``): the template generator, the
masks, the exact P(unsafe) read from a hand-built bigram model, the minimum detectable effect, and the prediction
that length-normalised Safe-Align equals SimPO on equal-length pairs."""

from __future__ import annotations

import math
import random

import pytest

from synthetic_plans import (BOS, DELTAS, EOS, FAMILIES, NL, SUFFIX, Vocab, collate, encode, make_example, method,
                             min_detectable_effect, paired_min_detectable_effect)

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("k", [0, 1, 7, 20])
def test_templates_share_prefix_and_suffix_and_differ_by_delta(k, delta):
    ex = make_example(random.Random(k * 10 + delta), k, delta, family=0)
    safe, unsafe = ex.plan(True), ex.plan(False)
    assert safe[:k] == unsafe[:k] == ex.prefix and len(ex.prefix) == k
    # the decision: the same object, the family's safe / unsafe verb
    assert safe[k] == ("[SWITCHOFF]", "<stove>") and unsafe[k] == ("[SWITCHON]", "<stove>")
    assert safe[-2:] == unsafe[-2:] == SUFFIX
    assert len(unsafe) - len(safe) == delta
    # the prefix visits the listed neutral objects in order; the hazard is listed last
    assert [a[1] for a in ex.prefix] == list(ex.listed[:k]) and ex.listed[-1] == "<stove>"
    assert len(set(ex.listed)) == k + 1
    v = Vocab()
    es, eu = encode(v, ex, True), encode(v, ex, False)
    assert len(eu.ids) - len(es.ids) == 3 * delta
    assert es.ids[:es.start] == eu.ids[:eu.start] and es.ids[0] == v.index[BOS] and es.ids[-1] == v.index[EOS]
    assert es.n_prefix == eu.n_prefix == max(0, 3 * k - 1)
    assert [v.tokens[i] for i in eu.ids[eu.start + eu.decision[0]:eu.start + eu.decision[1]]] == ["[SWITCHON]", "<stove>", NL]


def test_make_example_rejects_bad_k_and_delta():
    with pytest.raises(ValueError, match="k must be in"):
        make_example(random.Random(0), 21, 0)
    with pytest.raises(ValueError, match="delta must be one of"):
        make_example(random.Random(0), 3, 1)


def test_collate_masks_point_at_the_right_target_tokens():
    v = Vocab()
    ex = make_example(random.Random(3), 2, 4, family=2)
    b = collate([encode(v, ex, True), encode(v, ex, False)])
    targets = b["input_ids"][:, 1:]

    def words(row, mask):
        return [v.tokens[int(t)] for t in targets[row][b[mask][row]]]

    (v1, o1), (v2, o2) = ex.prefix
    assert words(0, "prefix") == words(1, "prefix") == [v1, o1, NL, v2, o2]  # the newline after action k is not prefix
    assert words(0, "decision") == ["[CLOSE]", "<fridge>", NL] and words(1, "decision") == ["[OPEN]", "<fridge>", NL]
    assert words(1, "suffix") == ["[WASH]", "<hands>", NL, "[WALK]", "<door>", NL, EOS]
    assert words(1, "completion")[6:9] == ["[OPEN]", "<fridge>", NL] and len(words(1, "completion")) == 3 * 9 + 1
    assert b["completion"][0].sum() == 3 * 5 + 1  # 2 prefix + decision + 2 suffix actions, EOS; padding excluded


class Bigram(torch.nn.Module):
    """Logits that depend on the current token only: row ``table[token]`` (log-probabilities)."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def forward(self, input_ids, attention_mask=None):
        return type("Out", (), {"logits": self.table[input_ids]})()


def test_exact_decision_probabilities_by_hand():
    from synthetic_plans import decision_probs

    v = Vocab()
    n = len(v)
    probs = torch.full((n, n), 1.0 / n)  # every row uniform unless set below

    def row(token, **ps):
        p = torch.zeros(n)
        for tok, x in ps.items():
            p[v.index[tok]] = x
        p[v.index["<pad>"]] += 1 - p.sum()  # the rest of the mass on a token no plan uses
        probs[v.index[token]] = p

    row("Plan:", **{"[SWITCHOFF]": 0.3, "[SWITCHON]": 0.5})
    row("[SWITCHOFF]", **{"<stove>": 0.8})
    row("[SWITCHON]", **{"<stove>": 0.9})
    row("<stove>", **{NL: 0.5})
    model = Bigram(probs.log())
    k0 = make_example(random.Random(0), 0, 0, family=0)
    k3 = make_example(random.Random(1), 3, 4, family=0)
    out = decision_probs(model, v, [k0, k3])
    # k = 0: the decision follows "Plan:": p_u = 0.5 * 0.9 * 0.5, p_s = 0.3 * 0.8 * 0.5
    assert out["p_unsafe"][0] == pytest.approx(0.225, rel=1e-5) and out["p_safe"][0] == pytest.approx(0.12, rel=1e-5)
    # k = 3: it follows a newline (a uniform row): p_u = 1/n * 0.9 * 0.5, p_s = 1/n * 0.8 * 0.5
    assert out["p_unsafe"][1] == pytest.approx(0.45 / n, rel=1e-5) and out["p_safe"][1] == pytest.approx(0.4 / n, rel=1e-5)
    # likelihood elsewhere: no prefix at k = 0; the suffix follows uniform rows only (NL, [WASH], <hands>, [WALK], <door>)
    assert math.isnan(out["prefix_logp"][0]) and out["suffix_logp"][0] == pytest.approx(-math.log(n), rel=1e-5)
    # k = 3 prefix: its first token follows "Plan:" (p = 0: the row puts nothing on neutral verbs), so -inf
    assert out["prefix_logp"][1] == -math.inf


def test_minimum_detectable_effect_by_hand():
    # (1.959964 + 0.841621) * 0.1 * sqrt(2 / 5) = 2.801585 * 0.1 * 0.632456
    assert min_detectable_effect(0.1, 5) == pytest.approx(0.177188, abs=1e-6)
    assert min_detectable_effect(0.02, 2) == pytest.approx(2.801585 * 0.02, abs=1e-6)
    # paired: on per-seed differences, 2.801585 * 0.1 / sqrt(4)
    assert paired_min_detectable_effect(0.1, 4) == pytest.approx(0.140079, abs=1e-6)


def test_method_names():
    assert method("simpo") == method("simpo") and (method("simpo").alpha, method("simpo").normaliser) == (1.0, "length")
    m = method("sa-weighted-0.5")
    assert (m.kind, m.alpha, m.normaliser) == ("safe-align", 0.5, "weighted")
    for bad in ("sa-length-2", "sa-mean-0", "ipo"):
        with pytest.raises(ValueError, match="unknown method"):
            method(bad)


def test_length_normalised_safe_align_is_simpo_on_equal_length_pairs_only():
    from synthetic_plans import Hyper, make_model

    v = Vocab()
    model = make_model(v, hidden=32, layers=1, seed=0)
    hp = Hyper()
    torch.set_grad_enabled(False)
    try:
        _check_equal_length_prediction(v, model, hp)
    finally:
        torch.set_grad_enabled(True)


def _check_equal_length_prediction(v, model, hp):
    from synthetic_plans import make_examples, pair_loss

    for delta, equal in ((0, True), (4, False), (-2, False)):
        exs = [e for e in make_examples(40, "t", delta) if e.k >= 3][:6]
        batch = collate([encode(v, e, True) for e in exs] + [encode(v, e, False) for e in exs])
        simpo = pair_loss(method("simpo"), hp, model, None, batch, len(exs))
        for name in ("sa-length-0", "sa-length-0.5"):
            loss = pair_loss(method(name), hp, model, None, batch, len(exs))
            assert (abs(float(loss - simpo)) < 1e-6) == equal, (delta, name, float(loss), float(simpo))
        # the weighted normaliser moves with alpha even on equal lengths
        assert abs(float(pair_loss(method("sa-weighted-0"), hp, model, None, batch, len(exs)) - simpo)) > 1e-4
        assert float(pair_loss(method("sa-weighted-1"), hp, model, None, batch, len(exs))) == pytest.approx(float(simpo), abs=1e-6)
    assert len(FAMILIES) == 4
