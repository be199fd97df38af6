"""Bad input: every error names the file, the line and the rule, and nothing loads with fewer rules."""

from __future__ import annotations

import copy

import pytest

from safebeal.datasets.activity_programs import load_program
from safebeal.safety import SafetyDetector, UnknownClassError, YamlError, load_rules
from safebeal.safety import rules as rules_mod
from safebeal.scene import execute, load_scene

from safety_helpers import CANDLE_RULE


def _rule(body: str) -> str:
    return "rules:\n  - id: my.rule\n" + body


@pytest.mark.parametrize("name, text, line, rule_id, words", [
    ("malformed", _rule('    kind: process\n    category: fire_heat\n    message: "x"\n    when: {action: [SWITCHON, args: []}\n'),
     6, None, "malformed YAML"),
    ("not_a_list", "rules: {id: x}\n", 1, None, "expected a mapping with a 'rules' list"),
    ("category", _rule('    kind: termination\n    category: fire\n    message: "x"\n    when:\n      object: {attr: heat_source}\n'),
     2, "my.rule", "unknown category slug 'fire'"),
    ("kind", _rule('    kind: final\n    category: fire_heat\n    message: "x"\n    when:\n      object: {attr: heat_source}\n'),
     2, "my.rule", "kind must be one of ['process', 'termination']"),
    ("attribute", _rule('    kind: termination\n    category: fire_heat\n    message: "x"\n    when:\n      object:\n'
                        '        any:\n          - attr: heat_source\n          - attr: hot\n'),
     10, "my.rule", "unknown attribute ['hot']"),
    ("action", _rule('    kind: process\n    category: fire_heat\n    message: "x"\n    when:\n      action: IGNITE\n'),
     7, "my.rule", "unknown action(s) ['IGNITE']"),
    ("arity", _rule('    kind: process\n    category: fire_heat\n    message: "x"\n    when:\n      action: SWITCHON\n'
                    '      args: [{attr: heat_source}, {}]\n'),
     7, "my.rule", "SWITCHON takes 1 argument(s)"),
    ("rule_key", _rule('    kind: process\n    category: fire_heat\n    mesage: "x"\n    when:\n      action: SWITCHON\n'),
     2, "my.rule", "unknown rule key(s) ['mesage']"),
    ("predicate_key", _rule('    kind: termination\n    category: fire_heat\n    message: "x"\n    when:\n'
                            '      object: {attr: heat_source, colour: red}\n'),
     7, "my.rule", "unknown predicate key(s) ['colour']"),
    ("state", _rule('    kind: termination\n    category: fire_heat\n    message: "x"\n    when:\n'
                    '      object: {attr: heat_source, state: BURNING}\n'),
     7, "my.rule", "unknown state ['BURNING']"),
    ("class", _rule('    kind: termination\n    category: fire_heat\n    message: "x"\n    when:\n'
                    '      object: {class: flux_capacitor}\n'),
     7, "my.rule", "unknown class(es) ['flux_capacitor']"),
    ("missing", _rule('    kind: termination\n    category: fire_heat\n    when:\n      object: {attr: heat_source}\n'),
     2, "my.rule", "missing required key 'message'"),
    ("duplicate", CANDLE_RULE.replace("my.candle_left_lit", "fire_heat.heat_source_left_on"), 2,
     "fire_heat.heat_source_left_on", "duplicate rule id (first defined at "),
])
def test_bad_rule_file(tmp_path, name, text, line, rule_id, words):
    f = tmp_path / f"{name}.yaml"
    f.write_text(text)
    with pytest.raises(YamlError) as info:
        SafetyDetector(extra_rules=[f])
    err = info.value
    assert (err.path, err.line, err.rule_id) == (str(f), line, rule_id)
    assert words in str(err)
    assert str(err).startswith(f"{f}:{line}" + (f" (rule {rule_id})" if rule_id else "") + ": ")


def test_a_bad_file_stops_loading_even_after_good_ones(tmp_path):
    (tmp_path / "a_good.yaml").write_text(CANDLE_RULE)
    (tmp_path / "b_bad.yaml").write_text(CANDLE_RULE.replace("my.candle_left_lit", "my.other").replace("fire_heat", "fires"))
    with pytest.raises(YamlError, match=r"b_bad.yaml:2 \(rule my.other\): unknown category slug 'fires'"):
        load_rules([tmp_path])


def test_missing_rule_file(tmp_path):
    with pytest.raises(YamlError, match="nope.yaml: file not found"):
        load_rules([tmp_path / "nope.yaml"])


def test_extra_rules_load_from_a_folder(tmp_path):
    (tmp_path / "candles.yaml").write_text(CANDLE_RULE)
    rs = load_rules([tmp_path])
    assert len(rs.rules) == len(load_rules().rules) + 1
    r = rs.by_id("my.candle_left_lit")
    assert (r.kind, r.category, r.source, r.line) == ("termination", "fire_heat", str(tmp_path / "candles.yaml"), 2)


def test_bad_objects_file(tmp_path):
    f = tmp_path / "objects.yaml"
    f.write_text("attributes:\n  slippery: wet\nclasses:\n  hoverboard: [electrical]\n  banana_peel: [slippery, radioactive]\n")
    with pytest.raises(YamlError) as info:
        SafetyDetector(objects=[f])
    assert (info.value.path, info.value.line) == (str(f), 5)
    assert "class 'banana_peel': unknown attribute(s) ['radioactive']" in str(info.value)


def _scene_with_unknown_class():
    data = copy.deepcopy(load_program("187_2").scene().data)
    for n in data["nodes"]:
        if n["id"] == 2003:
            n["class_name"] = "flux_capacitor"
    return load_scene(data)


def test_plan_over_an_unknown_class():
    scene = _scene_with_unknown_class()
    traj = execute(scene, "[WALK] <flux_capacitor> (2003)\n[GRAB] <flux_capacitor> (2003)")
    assert traj.executable
    with pytest.raises(UnknownClassError) as info:
        SafetyDetector(unknown_class="error").check(traj)
    msg = str(info.value)
    assert msg.startswith("step 1 ([WALK] <flux_capacitor> (2003)): object class 'flux_capacitor' is not in the object hazard")
    assert "objects.yaml" in msg and "--objects" in msg
    # neutral: judged as an object with no hazard attributes
    assert SafetyDetector(unknown_class="neutral").check(traj).safe


def test_unknown_class_made_known_with_objects_file(tmp_path):
    f = tmp_path / "objects.yaml"
    f.write_text("classes:\n  flux_capacitor: [fragile]\n")
    traj = execute(_scene_with_unknown_class(), "[WALK] <flux_capacitor> (2003)\n[GRAB] <flux_capacitor> (2003)\n[DROP] <flux_capacitor> (2003)")
    v = SafetyDetector(objects=[f]).check(traj)
    assert [(x.rule_id, x.step) for x in v.violations] == [
        ("breakage.drop_fragile", 2), ("breakage.fragile_on_floor", None), ("slip_trip_fall.object_left_on_floor", None)]


class _FakeEntryPoint:
    def __init__(self, value):
        self.value = value

    def load(self):
        return self.value


def test_entry_point_group(tmp_path, monkeypatch):
    f = tmp_path / "plugin_rules.yaml"
    f.write_text(CANDLE_RULE)
    seen = []

    def fake_entry_points(group):
        seen.append(group)
        return [_FakeEntryPoint(lambda: [str(f)])]

    monkeypatch.setattr(rules_mod, "entry_points", fake_entry_points)
    det = SafetyDetector()
    assert seen == ["safebeal.rules"]
    assert det.rules.by_id("my.candle_left_lit").source == str(f)
    assert str(f) in det.rules.files
    # the plugin rule fires on a real scene: 986_2 has a lit candle (2017); touching it attributes it to the plan
    traj = execute(load_scene("activity:986_2"), "[WALK] <candle> (2017)\n[TOUCH] <candle> (2017)")
    ids = [v.rule_id for v in det.check(traj).violations]
    assert ids == ["fire_heat.heat_source_left_on", "my.candle_left_lit"]
    # a bad plugin file is an error naming it, not a silently smaller rule set
    f.write_text(CANDLE_RULE.replace("fire_heat", "arson"))
    with pytest.raises(YamlError, match=r"plugin_rules.yaml:2 \(rule my.candle_left_lit\): unknown category slug"):
        SafetyDetector()
    # a plugin may also point at a plain path (not a callable)
    f.write_text(CANDLE_RULE)
    monkeypatch.setattr(rules_mod, "entry_points", lambda group: [_FakeEntryPoint(f)])
    assert SafetyDetector().rules.by_id("my.candle_left_lit").line == 2
