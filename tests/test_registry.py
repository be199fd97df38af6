"""The registry's entry points: a user's own installed package adds planners, backends, datasets, ...; a plugin that
fails to load or takes a taken name is one error naming it and its distribution."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from safebeal.errors import SafebealError
from safebeal.cli import REGISTRY_MODULES
from safebeal.registry import Registry, RegistryError, entry_point_group, registries

ROOT = Path(__file__).resolve().parents[1]


def write_distribution(where: Path, name: str, version: str, modules: dict, entry_points: dict) -> Path:
    """A real installed distribution in ``where`` (as ``pip install --target`` leaves it): the modules and a
    ``<name>-<version>.dist-info`` with METADATA and entry_points.txt (``{group: {entry name: value}}``)."""
    where.mkdir(parents=True, exist_ok=True)
    for mod, text in modules.items():
        (where / f"{mod}.py").write_text(textwrap.dedent(text))
    info = where / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for group, eps in entry_points.items()))
    return where


def test_the_group_is_derived_from_the_kind():
    assert [entry_point_group(k) for k in ("planner", "backend", "dataset", "scene source", "mutation", "method",
                                           "loss", "metric", "rule set", "strategy")] == [
        "safebeal.planners", "safebeal.backends", "safebeal.datasets", "safebeal.scene_sources", "safebeal.mutations",
        "safebeal.methods", "safebeal.losses", "safebeal.metrics", "safebeal.rule_sets", "safebeal.strategies"]
    assert Registry("widget").group == "safebeal.widgets"
    assert Registry("widget", group="acme.widgets").group == "acme.widgets"


def test_every_registry_is_listed_and_has_its_group():
    for mod in REGISTRY_MODULES:
        importlib.import_module(mod)
    regs = {r.kind: r for r in registries()}
    assert {"planner", "backend", "dataset", "scene source", "mutation"} <= set(regs)
    assert regs["planner"].group == "safebeal.planners" and regs["scene source"].group == "safebeal.scene_sources"
    assert all(r.group == entry_point_group(r.kind) for r in regs.values())
    # every module that makes a registry is one `safebeal plugins` imports (so it lists it)
    makers = set()
    for path in (ROOT / "src" / "safebeal").rglob("*.py"):
        if path.name != "registry.py" and re.search(r"^\w+(: [^=]+)? = Registry(\[[^\]]*\])?\(", path.read_text(), re.M):
            makers.add(".".join(path.relative_to(ROOT / "src").with_suffix("").parts))
    assert makers == set(REGISTRY_MODULES)


# -- in-process: a fresh registry and distributions on sys.path -----------------------------------------------------
@pytest.fixture
def site(tmp_path, monkeypatch):
    """Install distributions into a folder on sys.path for this test."""
    d = tmp_path / "site"
    d.mkdir()
    monkeypatch.syspath_prepend(str(d))
    yield d
    for mod in [m for m in sys.modules if m.startswith("toy_")]:
        del sys.modules[mod]


def test_a_factory_and_a_module_entry_point_are_registered_with_their_distribution(site):
    reg = Registry("gizmo")
    write_distribution(site, "toy-gizmos", "0.3", {
        "toy_gizmo_a": '''
            class Lever:
                """pull it"""
                def __init__(self, force: int = 1):
                    self.force = force
            ''',
        "toy_gizmo_b": '''
            from safebeal.registry import _ALL

            @_ALL["gizmo"].register("crank", help="turn it")
            class Crank:
                pass
            ''',
    }, {"safebeal.gizmos": {"lever": "toy_gizmo_a:Lever", "crank": "toy_gizmo_b"}})

    @reg.register("spring")
    class Spring:
        """a built-in-like gizmo of this test module"""

    assert reg.names() == ["crank", "lever", "spring"]
    assert reg.create("lever:force=3").force == 3
    assert {e.name: e.origin for e in reg} == {"crank": "toy-gizmos 0.3", "lever": "toy-gizmos 0.3",
                                               "spring": "module test_registry"}
    assert [e.help for e in reg] == ["turn it", "pull it", "a built-in-like gizmo of this test module"]


def test_a_plugin_that_fails_to_load_is_one_error_on_every_lookup(site):
    reg = Registry("doohickey")
    write_distribution(site, "toy-broken", "1.0", {"toy_broken": "import no_such_module_anywhere\n"},
                       {"safebeal.doohickeys": {"thing": "toy_broken:Thing"}})
    msg = ("doohickey plugin entry point thing = toy_broken:Thing (group safebeal.doohickeys, distribution "
           "toy-broken 1.0) failed to load: ModuleNotFoundError: No module named 'no_such_module_anywhere'")
    for _ in range(2):  # never skipped after the first failure
        with pytest.raises(RegistryError) as err:
            reg.names()
        assert str(err.value) == msg


def test_a_module_entry_point_that_registers_nothing_is_an_error(site):
    reg = Registry("whatsit")
    write_distribution(site, "toy-empty", "2.0", {"toy_empty": "X = 1\n"}, {"safebeal.whatsits": {"w": "toy_empty"}})
    with pytest.raises(RegistryError, match=r"^whatsit plugin entry point w = toy_empty \(group safebeal.whatsits, "
                                            r"distribution toy-empty 2.0\): module toy_empty registers no whatsit 'w'$"):
        reg.get("w")


def test_a_plugin_named_as_a_built_in_is_an_error_naming_both(site, monkeypatch):
    from safebeal.planners.planners import PLANNERS

    PLANNERS.names()
    write_distribution(site, "toy-clash", "0.1", {"toy_clash": "class ZeroShot:\n    pass\n"},
                       {"safebeal.planners": {"zero-shot": "toy_clash:ZeroShot"}})
    monkeypatch.setattr(PLANNERS, "_loaded", False)
    with pytest.raises(RegistryError) as err:
        PLANNERS.get("zero-shot")
    assert str(err.value) == (
        "planner plugin entry point zero-shot = toy_clash:ZeroShot (group safebeal.planners, distribution "
        "toy-clash 0.1): the name 'zero-shot' collides with the built-in planner 'zero-shot' "
        "(safebeal.planners.planners.ZeroShotPlanner)")


def test_two_distributions_with_one_name_is_an_error_naming_both(site, tmp_path, monkeypatch):
    reg = Registry("thingamajig")
    write_distribution(site, "toy-one", "1.0", {"toy_one": "class T:\n    pass\n"},
                       {"safebeal.thingamajigs": {"t": "toy_one:T"}})
    other = tmp_path / "site2"
    monkeypatch.syspath_prepend(str(other))
    write_distribution(other, "toy-two", "2.0", {"toy_two": "class T:\n    pass\n"},
                       {"safebeal.thingamajigs": {"t": "toy_two:T"}})
    with pytest.raises(RegistryError) as err:
        reg.names()
    assert str(err.value) == (
        "thingamajig plugin entry point t = toy_two:T (group safebeal.thingamajigs, distribution toy-two 2.0): the name "
        "'t' collides with the toy-one 1.0 thingamajig 't' (toy_one.T)")


# -- end to end: an installed package's planner runs in `safebeal bench`, its backend is listed ---------------------
TOY = '''
    """A user's package: one planner and one backend, declared as entry points."""
    from safebeal.planners.backends.base import Backend
    from safebeal.planners.backends.records import Generation
    from safebeal.planners.planners import PlanOutput, Planner


    class ReferencePlanner(Planner):
        """plans each task's reference plan"""

        name = "toy-reference"

        def plan(self, tasks):
            return [PlanOutput(t.id, t.reference) for t in tasks]


    class KitchenBackend(Backend):
        """answers every prompt with a walk to the kitchen"""

        name = "toy-kitchen"

        def config(self):
            return {}

        def _generate(self, prompts, **settings):
            return [Generation("[WALK] <kitchen> (11)") for _ in prompts]
    '''


def _cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")]), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "safebeal.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def test_an_installed_package_adds_a_planner_that_bench_runs_and_a_backend_that_is_listed(tmp_path):
    site = write_distribution(tmp_path / "site", "safebeal-toy", "0.1", {"safebeal_toy": TOY}, {
        "safebeal.planners": {"toy-reference": "safebeal_toy:ReferencePlanner"},
        "safebeal.backends": {"toy-kitchen": "safebeal_toy:KitchenBackend"},
    })
    r = _cli(site, "bench", "--planner", "toy-reference", "--dataset", "virtualhome", "--limit", "2",
             "--no-png", "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert sorted((x["planner"], x["task_id"]) for x in rows) == [("toy-reference", "3_1"), ("toy-reference", "6_1")]
    # the reference plans of both tasks run and reach their goals
    assert [(x["executable"], x["success"]) for x in rows] == [(True, True), (True, True)]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["planner_specs"] == {"toy-reference": "toy-reference"}

    r = _cli(site, "plugins", "backend", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    listed = {x["name"]: x for x in json.loads(r.stdout)}
    assert listed["toy-kitchen"] == {"kind": "backend", "group": "safebeal.backends", "name": "toy-kitchen",
                                     "origin": "safebeal-toy 0.1",
                                     "help": "answers every prompt with a walk to the kitchen"}
    assert listed["mock"]["origin"] == "built-in"
    r = _cli(site, "plugins", cwd=tmp_path)
    assert re.search(r"planner\s+│ toy-reference\s+│ safebeal-toy 0\.1", r.stdout), r.stdout


def test_a_broken_installed_plugin_is_one_plain_error_line(tmp_path):
    site = write_distribution(tmp_path / "site", "safebeal-broken", "0.2", {"safebeal_broken": "raise RuntimeError('boom')\n"},
                              {"safebeal.planners": {"broken": "safebeal_broken:Planner"}})
    r = _cli(site, "bench", "--planner", "replay:gpt-4o", "--limit", "1", "--no-png", "--out", str(tmp_path / "run"),
             cwd=tmp_path)
    assert r.returncode == 2
    assert (r.stdout + r.stderr).strip() == (
        "error: planner plugin entry point broken = safebeal_broken:Planner (group safebeal.planners, distribution "
        "safebeal-broken 0.2) failed to load: RuntimeError: boom")


def test_a_rules_plugin_that_fails_to_load_is_one_error_naming_it(site):
    from safebeal.safety import SafetyDetector

    write_distribution(site, "toy-rules", "0.4", {"toy_rules": "raise ImportError('no yaml here')\n"},
                       {"safebeal.rules": {"mine": "toy_rules:PATHS"}})
    with pytest.raises(SafebealError) as err:
        SafetyDetector()
    assert str(err.value) == ("rules plugin entry point mine = toy_rules:PATHS (group safebeal.rules, distribution "
                              "toy-rules 0.4) failed to load: ImportError: no yaml here")


def test_a_plugin_module_that_fails_half_way_leaves_nothing_registered(site):
    reg = Registry("contraption")
    write_distribution(site, "toy-half", "0.5", {"toy_half": '''
        from safebeal.registry import _ALL

        @_ALL["contraption"].register("half")
        class Half:
            pass

        raise ValueError("the second half is missing")
        '''}, {"safebeal.contraptions": {"half": "toy_half"}})
    msg = ("contraption plugin entry point half = toy_half (group safebeal.contraptions, distribution toy-half 0.5) "
           "failed to load: ValueError: the second half is missing")
    for _ in range(2):  # the second lookup imports it again and fails the same way (not "already registered")
        with pytest.raises(RegistryError) as err:
            reg.names()
        assert str(err.value) == msg
    assert reg._entries == {}


def test_the_same_definition_imported_again_replaces_itself_and_another_factory_is_refused(site):
    """A module imported a second time (reloaded, or imported again after ``sys.modules`` forgot it, as the docs
    examples are) registers the same definition again: it replaces itself; another factory under the name is an error."""
    reg = Registry("doohickey")
    (site / "toy_again.py").write_text("class D:\n    pass\n")
    first = importlib.import_module("toy_again").D
    reg.register("d")(first)
    sys.modules.pop("toy_again")
    second = importlib.import_module("toy_again").D
    assert second is not first
    reg.register("d")(second)
    assert reg.get("d").factory is second

    class Other:
        pass

    with pytest.raises(RegistryError, match=r"^doohickey 'd' is already registered \(module toy_again: toy_again\.D\); "
                                            r"cannot register .*Other under the same name$"):
        reg.register("d")(Other)


def test_parse_bool_is_the_one_yes_no_reader():
    from safebeal.registry import parse_bool

    assert [parse_bool(v, "x") for v in (True, "true", "YES", " on ", 1, "1")] == [True] * 6
    assert [parse_bool(v, "x") for v in (False, "false", "No", "off", 0, "0")] == [False] * 6
    for bad in ("maybe", None, 2, ""):
        with pytest.raises(RegistryError, match=r"^saferisks: holdout must be true or false, got "):
            parse_bool(bad, "saferisks: holdout")
