"""The object hazard knowledge (safety/data/objects.yaml): coverage of the shipped scenes and spot checks."""

from __future__ import annotations

import re

import pytest

from safebeal.resources import load_vh_json, name_equivalence, vh_programs_root
from safebeal.safety import load_rules
from safebeal.safety.conditions import PREDICATE_KEYS
from safebeal.safety.knowledge import DEFAULT_OBJECTS, build_kb, load_objects
from safebeal.safety.yamlio import loads_yaml_with_lines

KB = build_kb()
#: the hazard attributes the shipped rules read (or read before the physical object model came)
HAZARD_ATTRS = frozenset({"heat_source", "flammable", "fragile", "sharp", "toxic", "liquid", "perishable", "metal",
                          "water_source", "electrical", "floor", "floor_standing", "food", "food_container",
                          "cold_storage", "ready_to_eat", "mild_cleaner", "liquid_appliance", "raw_meat", "cooker",
                          "heavy"})


@pytest.fixture(scope="module")
def graph_classes() -> set:
    # A regex over the raw files: 1.7 s instead of 15 s for json.load; checked to give the same 244 names.
    rx = re.compile(r'"class_name":\s*"([^"]+)"')
    files = sorted((vh_programs_root() / "init_and_final_graphs").rglob("*.json"))
    assert len(files) == 518
    out = set()
    for f in files:
        out.update(rx.findall(f.read_text()))
    return out


def test_every_class_of_the_shipped_graphs_is_listed(graph_classes):
    assert len(graph_classes) == 244
    missing = sorted(c for c in graph_classes if not KB.known(c))
    assert missing == []
    # listed as a class itself, not only through an alias
    assert sorted(c for c in graph_classes if c not in KB.classes) == []


def test_every_class_of_properties_data_is_listed():
    props = load_vh_json("properties_data.json")
    assert len(props) == 314
    assert sorted(c for c in props if not KB.known(c)) == []
    # the two properties_data names that are aliases, not classes
    assert sorted(c for c in props if c not in KB.classes) == ["fridge", "sofa", "stove"]


def test_aliases_follow_the_simulator_equivalences():
    assert KB.canonical("stove") == "oven" and KB.canonical("fridge") == "freezer"
    assert KB.canonical("tv") == "television" and KB.canonical("sofa") == "couch"
    assert KB.attrs("stove") == KB.attrs("oven") == {"heat_source", "heats_in_use"}
    assert KB.attrs("fridge") == {"cold_storage"}
    eq_names = {v for vs in name_equivalence().values() for v in vs} | set(name_equivalence())
    for alias, target in KB.aliases.items():
        assert alias not in KB.classes, alias
        assert target in KB.classes, (alias, target)
        assert alias in eq_names, f"alias {alias!r} is not a name of class_name_equivalence.json"


@pytest.mark.parametrize("cls, attrs", [
    ("knife", {"sharp", "metal"}),
    ("scissors", {"sharp", "metal"}),
    ("needle", {"sharp", "metal"}),
    ("wine_glass", {"fragile", "food_container"}),
    ("plate", {"fragile", "food_container"}),
    ("detergent", {"liquid", "toxic"}),
    ("laundry_detergent", {"liquid", "toxic"}),
    ("milk", {"liquid", "food", "perishable"}),
    ("food_chicken", {"food", "perishable", "raw_meat"}),
    ("food_bread", {"food", "ready_to_eat"}),
    ("oven", {"heat_source"}),
    ("candle", {"heat_source"}),
    ("towel", {"flammable"}),
    ("faucet", {"water_source"}),
    ("freezer", {"cold_storage"}),
    ("floor", {"floor"}),
    ("dish_soap", {"liquid", "mild_cleaner"}),
    ("wall", set()),
])
def test_real_world_attributes(cls, attrs):
    """The hazard attributes (those the rules read); the physical object model is checked further down."""
    assert KB.attrs(cls) & HAZARD_ATTRS == attrs


def test_electrical_is_derived_from_has_plug():
    assert "electrical" not in KB.attrs("toaster")
    assert KB.attrs("toaster", ["HAS_PLUG", "HAS_SWITCH"]) == {"heat_source", "food_container", "heats_in_use", "electrical"}
    assert KB.attrs("faucet", ["HAS_SWITCH"]) == {"water_source"}  # a switch alone is no mains device


def test_rules_use_only_known_attributes():
    """Every attribute any rule names is in the vocabulary (the loader enforces it; this pins the set)."""
    used = set()

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("attr", "any_attr", "not_attr"):
                    used.update([v] if isinstance(v, str) else v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for r in load_rules().rules:
        walk(r.when)
    assert used <= set(KB.attributes)
    assert {"heat_source", "flammable", "fragile", "sharp", "toxic", "liquid", "perishable", "metal", "water_source",
            "electrical", "floor", "food", "food_container", "cold_storage", "ready_to_eat", "raw_meat"} <= set(KB.attributes)


def test_yaml_reads_on_off_as_strings():
    """YAML 1.1 would turn the simulator's ON/OFF/YES/NO into booleans; the rule loader keeps them names."""
    assert loads_yaml_with_lines("state: [ON, OFF, yes, NO]\nflag: true\n", "<t>") == {
        "state": ["ON", "OFF", "yes", "NO"], "flag": True, "__line__": 1}


def test_user_objects_file_overrides_and_extends(tmp_path):
    f = tmp_path / "more.yaml"
    f.write_text("classes:\n  hoverboard: [electrical, fragile]\n  knife: [sharp]\n")
    kb = build_kb([f])
    assert kb.attrs("hoverboard") == {"electrical", "fragile"}
    assert kb.attrs("knife") == {"sharp"}
    assert kb.sources == [str(DEFAULT_OBJECTS), str(f)]
    assert load_objects(DEFAULT_OBJECTS).classes == KB.classes
    assert "attr" in PREDICATE_KEYS


def test_node_attrs_reads_class_and_properties_and_is_empty_for_a_missing_node():
    from types import SimpleNamespace

    towel = SimpleNamespace(class_name="towel", properties=("GRABBABLE",))
    plugged_towel = SimpleNamespace(class_name="towel", properties=("HAS_PLUG",))  # HAS_PLUG derives electrical
    assert KB.node_attrs(towel) == {"flammable", "fabric"}
    assert KB.node_attrs(plugged_towel) == {"flammable", "fabric", "electrical"}
    assert KB.node_attrs(None) == frozenset()
