"""The physical object model in safety/data/objects.yaml: every class a scene can contain has an entry, and each
physical attribute (material, battery, electronics, sealed, microwave_safe, oven_safe, heats_in_use, cookware)
holds for the real objects checked by hand below."""

from __future__ import annotations

import re
from typing import Dict, List, Set

import pytest

from safebeal.resources import load_vh_json, name_equivalence, vh_programs_root
from safebeal.safety.knowledge import ObjectKB, build_kb, load_objects
from safebeal.safety.yamlio import YamlError
from safebeal.scene.extensions import extensions
from safebeal.scene.homes import ROOM_KINDS, generate_home, home_spec

KB = build_kb()

#: what a thing is made of: the material tags, the existing food and liquid, and living things
MATERIALS = frozenset({"metal", "plastic", "paper", "glass", "ceramic", "fabric", "wood", "stone", "rubber", "leather",
                       "wax", "food", "liquid", "living"})
PHYSICAL = ("plastic", "paper", "glass", "ceramic", "fabric", "wood", "stone", "rubber", "leather", "wax", "living",
            "battery", "electronics", "sealed", "microwave_safe", "oven_safe", "heats_in_use", "cookware")


# -- every class a scene can contain, from the files that define them ------------------------------------------
def _home_classes() -> Set[str]:
    """Every class homes.yaml (as homes.py loads it) can put into a procedural home, rooms and agent included."""
    spec = home_spec()
    out: Set[str] = set(ROOM_KINDS) | {"character"} | set(spec.structure) | set(spec.storage) | set(spec.fridge_only)
    out |= set(spec.knowledge.properties)  # properties_data.json with homes.yaml's own classes (vase, safe, ...)
    for room in spec.rooms.values():
        for f in room.furniture:
            out.update(f.classes)
            out.update(f.faces)
        pools = [room.objects] + ([room.fridge_food] if room.fridge_food else [])
        for pool in pools:
            out.update(pool.classes)
            out.update(c for alts in pool.required for c in alts)
        out.update(c for alts in room.required for c in alts)
    return out


def _sources() -> Dict[str, Set[str]]:
    rx = re.compile(r'"class_name":\s*"([^"]+)"')
    graphs: Set[str] = set()
    for f in sorted((vh_programs_root() / "init_and_final_graphs").rglob("*.json")):
        graphs.update(rx.findall(f.read_text()))
    placing = load_vh_json("object_script_placing.json")
    eq = name_equivalence()
    return {
        "shipped init/final graphs": graphs,
        "properties_data.json": set(load_vh_json("properties_data.json")),
        "object_states.json": set(load_vh_json("object_states.json")),
        "object_script_placing.json": set(placing) | {p["destination"] for v in placing.values() for p in v},
        "class_name_equivalence.json": set(eq) | {v for vs in eq.values() for v in vs},
        "homes.yaml (home:<seed>)": _home_classes(),
        "actions.yaml sets": {c for s in extensions().sets.values() for c in s},
    }


@pytest.fixture(scope="module")
def sources() -> Dict[str, Set[str]]:
    return _sources()


def _missing(kb: ObjectKB, sources: Dict[str, Set[str]]) -> List[str]:
    return sorted(f"{where}: {c}" for where, classes in sources.items() for c in classes if not kb.known(c))


def test_every_class_a_scene_can_contain_has_an_entry(sources):
    assert len(sources["shipped init/final graphs"]) == 244
    assert len(sources["properties_data.json"]) == 314
    assert {"vase", "statue", "watch", "dumbbell", "safe", "kitchen", "livingroom", "character"} <= sources["homes.yaml (home:<seed>)"]
    assert _missing(KB, sources) == []


def test_the_coverage_check_fails_when_a_class_has_no_entry(sources):
    kb = ObjectKB(KB.attributes, {c: a for c, a in KB.classes.items() if c != "vase"}, KB.aliases)
    assert _missing(kb, sources) == ["actions.yaml sets: vase", "homes.yaml (home:<seed>): vase"]
    kb = ObjectKB(KB.attributes, KB.classes, {a: c for a, c in KB.aliases.items() if a != "food_lime"})
    assert _missing(kb, sources) == ["class_name_equivalence.json: food_lime"]


def test_generated_homes_contain_only_enumerated_classes(sources):
    """The enumeration of homes.yaml misses nothing generate_home builds (30 seeds: every room kind occurs)."""
    seen: Set[str] = set()
    for seed in range(30):
        seen |= {n["class_name"] for n in generate_home(seed)["nodes"]}
    assert set(ROOM_KINDS) <= seen
    assert sorted(seen - sources["homes.yaml (home:<seed>)"]) == []
    assert sorted(c for c in seen if not KB.known(c)) == []


# -- the vocabulary -----------------------------------------------------------------------------------------------
def test_every_physical_attribute_has_a_one_line_meaning_and_members():
    for a in PHYSICAL:
        meaning = KB.attributes[a]
        assert "\n" not in meaning and len(meaning) > 20, a
        assert KB.classes_with(a), f"{a} has no class"


def test_every_object_the_agent_can_pick_up_has_a_material():
    """Grabbable classes without a material tag are these, each for a reason."""
    props = load_vh_json("properties_data.json")
    untagged = sorted(c for c in KB.classes if "GRABBABLE" in props.get(c, ()) and not KB.classes[c] & MATERIALS)
    assert untagged == [
        "centerpiece",     # flowers, a bowl or candles: varies
        "dirt",            # soil
        "face_soap",       # a bar of soap
        "shaving_cream",   # an aerosol in a steel can: `metal` is left as the rules read it (docs/hazards.md)
        "shoe-shine_kit",  # a box of tins, brushes and polish
        "soap",            # a bar of soap
        "towel_rack",      # metal: `metal` is left as the rules read it
    ]


# -- each attribute on hand-picked classes (what the real object is) ----------------------------------------------
@pytest.mark.parametrize("attr, yes, no", [
    ("plastic", ["remote_control", "toothbrush", "detergent", "creditcard", "cd", "dish_soap"],
     ["plate", "book", "knife", "towel", "wine_glass"]),
    ("paper", ["book", "box", "newspaper", "paper_towel", "envelope", "tea_bag", "board_game"],
     ["towel", "plate", "creditcard", "cd"]),
    ("glass", ["wine_glass", "drinking_glass", "water_glass", "window", "mirror", "light_bulb", "wine", "beer",
               "cellphone"], ["mug", "plate", "cup", "knife"]),
    ("ceramic", ["plate", "mug", "bowl", "coffee_cup", "toilet", "vase"], ["drinking_glass", "cookingpot", "table"]),
    ("fabric", ["towel", "clothes_shirt", "blanket", "pillow", "couch", "bed", "curtain", "oven_mitts"],
     ["table", "book", "laptop", "floor"]),
    ("wood", ["table", "chair", "cutting_board", "wooden_spoon", "bookshelf", "pencil"], ["knife", "mug", "pillow"]),
    ("living", ["cat", "dog", "child", "character", "hands_both", "orchid"], ["toy", "food_chicken", "statue"]),
    ("battery", ["cellphone", "phone", "laptop", "watch", "electric_shaver", "video_game_controller"],
     ["remote_control", "television", "computer", "toaster", "keyboard"]),
    ("electronics", ["cellphone", "laptop", "remote_control", "television", "creditcard", "watch", "keyboard"],
     ["toaster", "kettle", "lamp", "iron", "cd", "coin"]),
    ("sealed", ["food_egg", "beer", "wine", "alcohol", "food_jam", "shaving_cream", "lighter"],
     ["milk", "water", "food_potato", "mug", "dough"]),
    ("microwave_safe", ["plate", "bowl", "mug", "drinking_glass", "food_pizza", "milk", "paper_towel", "food_potato"],
     ["fork", "cookingpot", "book", "cellphone", "food_egg", "box", "wine_glass", "laptop", "creditcard", "oil",
      "tea_bag"]),
    ("oven_safe", ["cookingpot", "fryingpan", "tray", "plate", "food_chicken", "food_potato", "dough"],
     ["mug", "drinking_glass", "cutting_board", "food_egg", "milk", "book", "towel", "kettle"]),
    ("heats_in_use", ["laptop", "lamp", "hairdryer", "iron", "toaster", "oven", "candle", "light_bulb", "cellphone"],
     ["television", "remote_control", "freezer", "faucet", "book", "washing_machine"]),
    ("cookware", ["cookingpot", "fryingpan", "sauce_pan", "pot", "tray"],
     ["kettle", "plate", "bowl", "knife", "toaster", "colander"]),
])
def test_attribute_on_hand_picked_classes(attr, yes, no):
    assert [c for c in yes if attr not in KB.attrs(c)] == []
    assert [c for c in no if attr in KB.attrs(c)] == []


def test_aliases_share_the_physical_model():
    assert {"wood", "fabric"} <= KB.attrs("sofa") == KB.attrs("couch")
    assert "heats_in_use" in KB.attrs("stove") and "cookware" in KB.attrs("cooking_pot")
    assert "food" in KB.attrs("food_carrots") and KB.canonical("food_lime") == "food_lemon"


# -- the attributes agree with each other and with the scene's extension sets ----------------------------------------
def _with(*attrs: str) -> Set[str]:
    return {c for c in KB.classes if set(attrs) <= KB.classes[c]}


def test_the_attributes_agree_with_each_other():
    assert _with("cookware") <= _with("oven_safe", "metal")
    assert _with("battery") <= _with("electronics")
    assert _with("heat_source") <= _with("heats_in_use")
    assert _with("sealed") & _with("microwave_safe") == set()
    assert _with("metal") & _with("microwave_safe") == set()
    assert _with("paper") & _with("microwave_safe") == {"napkin", "paper_towel"}  # plain ones: USDA says they may go
    assert _with("living") & _with("food") == set()
    assert _with("raw_meat") <= _with("oven_safe")


def test_what_shatters_is_glass_or_ceramic():
    """actions.yaml's `shatters` set (leaves sharp shards) is made of glass or ceramic."""
    shatters = set(extensions().sets["shatters"])
    assert sorted(c for c in shatters if not KB.attrs(c) & {"glass", "ceramic"}) == []


# -- the loader -----------------------------------------------------------------------------------------------------
def test_an_error_in_a_class_that_shares_an_attribute_name_points_at_the_class(tmp_path):
    """`glass` is both an attribute and a class; an error in the class entry names the class's line."""
    f = tmp_path / "objects.yaml"
    f.write_text("attributes:\n  glass: made of glass\nclasses:\n  vase: [glass]\n  glass: [glas]\n")
    with pytest.raises(YamlError) as info:
        load_objects(f)
    assert (info.value.path, info.value.line) == (str(f), 5)
    assert "class 'glass': unknown attribute(s) ['glas']" in str(info.value)


def test_a_user_file_uses_the_physical_vocabulary(tmp_path):
    f = tmp_path / "more.yaml"
    f.write_text("classes:\n  power_bank: [plastic, battery, electronics, heats_in_use]\n")
    kb = build_kb([f])
    assert kb.attrs("power_bank") == {"plastic", "battery", "electronics", "heats_in_use"}
    assert kb.classes_with("battery") == KB.classes_with("battery") | {"power_bank"}
