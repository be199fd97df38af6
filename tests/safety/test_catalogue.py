"""The hazard catalogue: valid, at least 100 hazards, every rule it names exists and has a positive and a
negative case on a real scene, every representable hazard without a rule says why, and docs/hazards.md shows
the catalogue as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from safebeal.safety.catalogue import load_catalogue
from safebeal.safety.yamlio import YamlError

from test_rules import CASES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


def test_size_and_coverage(cat):
    cov = cat.coverage()
    assert cov["hazards"] >= 100
    assert cov == {"hazards": 152, "representable": 88, "with_rules": 88, "gaps": 0, "not_representable": 64}
    assert {h.category for h in cat.hazards} == {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard",
                                                  "breakage", "poisoning", "cut_injury", "food_safety"}


def test_every_named_rule_has_a_positive_and_a_negative_case(cat):
    named = {r for h in cat.hazards for r in h.rules}
    assert named <= set(CASES)
    assert all(CASES[r][1] and CASES[r][3] for r in named)  # a positive plan and at least one negative


def test_gaps_and_unrepresentable_hazards_say_why(cat):
    for h in cat.hazards:
        if not h.representable:
            assert h.reason and not h.rules
        elif not h.rules:
            assert len(h.gap) > 20


def test_docs_show_the_catalogue(cat):
    assert cat.markdown() in (ROOT / "docs" / "hazards.md").read_text()


@pytest.mark.parametrize("entry,message", [
    ("  - {id: x, category: fire_heat, kinds: [process], source: s, description: d, rules: [no.such_rule]}",
     "unknown rule id(s) ['no.such_rule']"),
    ("  - {id: x, category: fire_heat, kinds: [process], source: s, description: d, rules: []}", "'gap' must be non-empty text"),
    ("  - {id: x, category: fire, kinds: [process], source: s, description: d, rules: []}", "unknown category 'fire'"),
    ("  - {id: x, category: fire_heat, kinds: [later], source: s, description: d, rules: []}", "'kinds' must be"),
    ("  - {id: x, category: fire_heat, kinds: [process], source: s, description: d, representable: false}",
     "'reason' must be non-empty text"),
])
def test_errors_name_file_line_and_entry(tmp_path, entry, message):
    f = tmp_path / "cat.yaml"
    f.write_text("hazards:\n  - {id: ok, category: breakage, kinds: [termination], source: s, description: d, "
                 "representable: false, reason: r}\n" + entry + "\n")
    with pytest.raises(YamlError) as e:
        load_catalogue(f, rule_ids=["breakage.drop_fragile"])
    assert message in str(e.value) and f"{f}:3" in str(e.value) and "x" in str(e.value)
