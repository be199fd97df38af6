"""Every registered planner and backend passes safebeal.testing's contract checks, and the checks catch what a
broken plugin does (each failure names the plugin and what it breaks)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from safebeal.errors import SafebealError
from safebeal.planners.backends.base import BACKENDS, Backend
from safebeal.planners.backends.records import Generation
from safebeal.planners.planners import PLANNERS, Planner, PlanOutput
from safebeal.registry import Entry
from safebeal.testing import PluginCheckError, check_backend, check_planner
from script_helpers import load_script

#: one spec per registered planner (a new planner must be added here: test_every_planner_has_a_contract_spec)
PLANNER_SPECS = {
    "replay": "replay:gpt-4o",
    "zero-shot": "zero-shot:backend=mock",
    "few-shot": "few-shot:backend=mock,safety_prompt=true",
    "llm-planner": "llm-planner:backend=mock",
    "search": "search:max_depth=4",
    "shield": "shield:planner=[replay:gpt-4o],mode=repair",
    "clmasp": "clmasp:planner=[replay:gpt-4o]",
    "react": "react:backend=mock,max_steps=3",
    "act": "act:backend=mock,max_steps=3",
}

#: backends checked elsewhere, where their fixtures live
BACKENDS_ELSEWHERE = {"hf": "test_backends_hf.py", "vllm": "test_backends_vllm.py"}


def test_every_planner_has_a_contract_spec():
    assert sorted(PLANNER_SPECS) == PLANNERS.names()


@pytest.mark.parametrize("name", sorted(PLANNER_SPECS))
def test_every_registered_planner_passes_check_planner(name):
    if name == "clmasp":
        pytest.importorskip("clingo")
    outs = check_planner(PLANNER_SPECS[name])
    assert sorted(o.task_id for o in outs) == ["3_1", "6_1"]  # the first two virtualhome tasks


def test_every_backend_is_checked_somewhere():
    assert sorted({"mock", "transcript", "openai", *BACKENDS_ELSEWHERE}) == BACKENDS.names()


def test_mock_backend_passes_check_backend():
    gens = check_backend("mock")
    assert [g.text for g in gens] == ["Task: Turn on the light.\nPlan:", "Task: Wash the cup.\nPlan:"]  # it echoes the last message


def test_mock_backend_scripted_outputs_pass(tmp_path):
    f = tmp_path / "outs.jsonl"
    f.write_text(json.dumps({"text": "[WALK] <kitchen> (11)"}) + "\n")
    gens = check_backend(f"mock:outputs={f}")
    assert [g.text for g in gens] == ["[WALK] <kitchen> (11)", "[WALK] <kitchen> (11)"]


def test_transcript_backend_passes_check_backend(tmp_path):
    from safebeal.testing import PROMPTS

    f = tmp_path / "samples.jsonl"
    turn = {"prompt": PROMPTS[0][0]["content"], "output": "[WALK] <light> (1)"}
    f.write_text(json.dumps({"planner": "react", "task_id": "t", "turns": [turn]}) + "\n")
    gens = check_backend(f"transcript:path={f}")
    assert gens[0].text == "[WALK] <light> (1)"
    assert gens[1].text is None and gens[1].error  # a prompt it never recorded: a recorded error naming it


def test_openai_backend_passes_check_backend(monkeypatch):
    pytest.importorskip("openai")
    fake = load_script(Path("tests/bench/openai_fake.py"), "openai_fake_contract")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    server = fake.FakeServer()
    try:
        gens = check_backend(fake.backend(server))
    finally:
        server.close()
    assert [g.text for g in gens] == [fake.PLAN, fake.PLAN]
    assert len(server.requests) == 6  # two prompts, three times: generate, generate_iter and the re-created backend


# -- what the checks catch ------------------------------------------------------------------------------------------
class _Short(Planner):
    """answers only the first task"""

    name = "short"

    def plan(self, tasks):
        return [PlanOutput(tasks[0].id, "[WALK] <kitchen> (11)")]


class _Dice(Planner):
    name = "dice"

    def plan(self, tasks):
        return [PlanOutput(t.id, f"[WALK] <kitchen> ({random.randrange(10**9)})") for t in tasks]


class _Unwritable(Planner):
    name = "unwritable"

    def plan(self, tasks):
        return [PlanOutput(t.id, "x", settings={"stop": {"a", "b"}}) for t in tasks]


class _Forgetful(Planner):
    name = "forgetful"

    def __init__(self, depth: int = 3):
        super().__init__()
        self.depth = depth

    def config(self):
        return {"name": self.name, "depth": self.depth}

    def plan(self, tasks):
        return [PlanOutput(t.id, "x") for t in tasks]


def _add(monkeypatch, registry, name, factory):
    monkeypatch.setitem(registry._entries, name, Entry(name, factory))


@pytest.mark.parametrize("factory, spec, message", [
    (_Short, "short", "planner 'short': plan_iter: gave 1 outputs for 2 tasks (missing ['6_1'], unknown [], repeated [])"),
    (_Dice, "dice", "planner 'dice': not deterministic: task 3_1 gave"),
    (_Unwritable, "unwritable", "planner 'unwritable': plan_iter: task 3_1: record() is not JSON-serialisable"),
    (_Forgetful, "forgetful:depth=5", "planner 'forgetful:depth=5': its spec 'forgetful' re-creates a planner with "
                                      "another config(): {'name': 'forgetful', 'depth': 3} instead of "
                                      "{'name': 'forgetful', 'depth': 5}"),
])
def test_check_planner_names_what_a_planner_breaks(monkeypatch, factory, spec, message):
    _add(monkeypatch, PLANNERS, spec.split(":")[0], factory)
    with pytest.raises(PluginCheckError) as err:
        check_planner(spec)
    assert str(err.value).startswith(message), str(err.value)
    assert isinstance(err.value, AssertionError) and isinstance(err.value, SafebealError)


def test_a_random_planner_passes_when_it_does_not_promise_determinism(monkeypatch):
    _add(monkeypatch, PLANNERS, "dice", _Dice)
    assert len(check_planner("dice", deterministic=False)) == 2


class _Echo(Backend):
    name = "echo"

    def config(self):
        return {}

    def _generate(self, prompts, **settings):
        return [Generation(p[-1]["content"]) for p in prompts]


class _Misnamed(_Echo):
    name = "other"


class _Both(_Echo):
    name = "both"

    def _generate(self, prompts, **settings):
        return [Generation("text", error="and an error") for _ in prompts]


class _Secretive(_Echo):
    name = "secretive"

    def __init__(self, key: str = "k"):
        self.key = key

    def config(self):
        return {"key": object()}


@pytest.mark.parametrize("factory, spec, message", [
    (_Misnamed, "misnamed", "backend 'misnamed': name is 'other', not its registry name 'misnamed'"),
    (_Both, "both", "backend 'both': prompt 0: text 'text' and error 'and an error': exactly one must be set"),
    (_Secretive, "secretive", "backend 'secretive': config() is not JSON-serialisable"),
])
def test_check_backend_names_what_a_backend_breaks(monkeypatch, factory, spec, message):
    _add(monkeypatch, BACKENDS, spec, factory)
    with pytest.raises(PluginCheckError) as err:
        check_backend(spec)
    assert str(err.value).startswith(message), str(err.value)


def test_a_plain_backend_passes(monkeypatch):
    _add(monkeypatch, BACKENDS, "echo", _Echo)
    assert [g.text for g in check_backend("echo")] == ["Task: Turn on the light.\nPlan:", "Task: Wash the cup.\nPlan:"]
