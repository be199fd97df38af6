"""A wrapping planner is one module: its record (``extras[<kind>]``), its summary (``summarize``) and what it
changes in the evaluated episode (``evaluated``), run through ``bench`` with the mock backend; and samples written
before planners kept their records in ``extras`` still load."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence

import pytest

from safebeal.bench.records import Episode
from safebeal.bench.rundir import RunDir
from safebeal.bench.runner import RunConfig, rescore, run_bench
from safebeal.bench.summary import METRICS, summarize
from safebeal.datasets.base import Task
from safebeal.planners.planners import PLANNERS, Planner, PlanOutput, create_planner, extra_of

PLAN = "[WALK] <kitchen> (1)\n[WALK] <bathroom> (2)\n[WALK] <kitchen> (1)"


class FirstStepPlanner(Planner):
    """Keeps the first step of another planner's plan: the whole of a wrapping planner, in one class."""

    name = "test-firststep"
    takes_default_backend = True
    summary_order = 45  # after clmasp's refinement, before the agents' record

    def __init__(self, planner: str = "zero-shot", default_backend: Any = None):
        super().__init__()
        self.inner = create_planner(planner, default_backend)
        self.spec = f"test-firststep:planner={planner}"

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        out = []
        for o in self.inner.plan(tasks):
            lines = (o.text or "").splitlines()
            kept = "\n".join(lines[:1])
            out.append(PlanOutput(o.task_id, kept, o.error, o.prompt, o.latency_s, o.attempts, o.usage,
                                  o.finish_reason, o.cache_hit, o.settings)
                       .with_extra(self.name, {"original_output": o.text, "dropped": max(len(lines) - 1, 0)}))
        return out

    @classmethod
    def summarize(cls, episodes: Sequence[Any], safe: Any) -> Dict[str, Any]:
        recs = [extra_of(e, cls.name) for e in episodes]
        return {"firststep": {"plans": len(recs), "dropped_steps": sum(r["dropped"] for r in recs),
                              "safe": sum(1 for e in episodes if safe(e))}}

    @classmethod
    def evaluated(cls, record: Dict[str, Any], episode: Any) -> Dict[str, Any]:
        return {"input_repairs": list(episode.input_repairs) + [f"test-firststep: dropped {record['dropped']} step(s)"]}


@pytest.fixture
def firststep():
    PLANNERS.register("test-firststep")(FirstStepPlanner)
    yield FirstStepPlanner
    PLANNERS._entries.pop("test-firststep")  # the registry has no other way out; other tests list the planners


def test_a_wrapping_planner_in_one_module_runs_through_bench(tmp_path, firststep):
    outputs = tmp_path / "mock.jsonl"
    outputs.write_text(json.dumps({"match": "Task: ", "text": PLAN}) + "\n")
    spec = f"test-firststep:planner=[zero-shot:backend=[mock:outputs={outputs}]]"
    out = tmp_path / "run"
    summary = run_bench(RunConfig(planners=[spec], dataset="virtualhome", out=str(out), workers=1, limit=3))
    samples = [json.loads(ln) for ln in (out / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 3
    for s in samples:
        assert s["extras"] == {"test-firststep": {"original_output": PLAN, "dropped": 2}}
        assert s["raw_output"] == "[WALK] <kitchen> (1)" and s["script"] == ["[WALK] <kitchen> (1)"]
        assert s["input_repairs"] == ["test-firststep: dropped 2 step(s)"]  # its evaluated() hook ran
        for key in ("prompt", "usage", "latency_s", "attempts", "finish_reason", "cache_hit"):
            assert key in s
        assert "shield" not in s and "refinement" not in s and "replan" not in s
    [(label, m)] = summary.items()
    safe = sum(1 for s in samples if s["safe"] and s["parse_error"] is None)
    assert m["firststep"] == {"plans": 3, "dropped_steps": 6, "safe": safe}
    keys = list(json.loads((out / "summary.json").read_text())[label])
    assert keys.index("firststep") == keys.index("outcomes") + 1  # its summary_order: after the rates


def test_a_planner_without_a_record_writes_no_extras(tmp_path):
    out = tmp_path / "run"
    run_bench(RunConfig(planners=["replay:gpt-4o"], dataset="virtualhome", out=str(out), workers=1, limit=2))
    for ln in (out / "samples.jsonl").read_text().splitlines():
        s = json.loads(ln)
        assert "extras" not in s and "shield" not in s and "refinement" not in s and "replan" not in s
        assert list(s)[list(s).index("gen_settings") + 1] == "step_confidence"


OLD = {"planner": "shield:planner=replay:gpt-4o,mode=repair", "dataset": "virtualhome", "task_id": "176_1",
       "raw_output": "[WALK] <kitchen> (1)", "script": ["[WALK] <kitchen> (1)"], "executable": True, "safe": True,
       "usage": None, "latency_s": None, "attempts": None, "finish_reason": None, "cache_hit": None,
       "shield": {"mode": "repair", "changed": True, "n_interventions": 2, "unresolved": 0,
                  "interventions": [{"action": "repaired_before"}, {"action": "appended"}]},
       "refinement": None, "replan": {"n_rounds": 1}, "scored_by": None}


def test_an_old_format_sample_is_migrated_on_read(tmp_path):
    ep = Episode.model_validate_json(json.dumps(OLD))
    assert ep.extras == {"shield": OLD["shield"], "llm-planner": {"n_rounds": 1}}
    dumped = ep.model_dump()
    assert "shield" not in dumped and "refinement" not in dumped and "replan" not in dumped
    run = tmp_path / "old"
    run.mkdir()
    (run / "samples.jsonl").write_text(json.dumps(OLD) + "\n")
    (run / "config.json").write_text(json.dumps({"dataset": "virtualhome", "planners": [OLD["planner"]]}))
    [loaded] = RunDir(run).load()
    assert loaded.extras["shield"]["n_interventions"] == 2
    s = summarize([loaded.model_dump()])
    # the shield's and llm-planner's summaries, from the migrated records: 2 interventions over 1 plan, changed
    assert s["interventions"] == 2 and s["changed_rate"] == 1.0 and s["repaired_share"] == 1.0
    assert s["shield"] == {"mode": "repair", "plans": 1, "changed": 1, "unresolved": 0,
                           "actions": {"appended": 1, "repaired_before": 1}}
    assert s["replan"] == {"plans": 1, "replanned": 1, "rounds": 1, "recovered": 1}


def test_an_old_run_directory_is_rescored_and_reported(tmp_path):
    from safebeal.bench.runner import report_run

    run = tmp_path / "old"
    run.mkdir()
    old = {**OLD, "planner": "replay:gpt-4o-2024-05-13", "shield": None}
    (run / "samples.jsonl").write_text(json.dumps(old) + "\n")
    (run / "config.json").write_text(json.dumps({"dataset": "virtualhome", "planners": [old["planner"]]}))
    summary = report_run(run, png=False)
    assert summary[old["planner"]]["replan"]["plans"] == 1 and "interventions" not in summary[old["planner"]]
    new = tmp_path / "new"
    rescored = rescore(run, new, workers=1)
    samples = {s["task_id"]: s for s in map(json.loads, (new / "samples.jsonl").read_text().splitlines())}
    # re-planning rounds come with the recorded output (the other tasks of the dataset have none recorded)
    assert samples["176_1"]["extras"] == {"llm-planner": {"n_rounds": 1}}
    assert sum(1 for s in samples.values() if "extras" in s) == 1
    assert rescored[old["planner"]]["replan"]["rounds"] == 1


def test_the_metrics_are_registered_in_their_order():
    names = sorted(METRICS.names(), key=lambda n: METRICS.create(n).order)
    assert names == ["rates", "rouge_l", "intervals", "plan_outcomes", "violations", "failures", "outcomes",
                     "confidence", "agent", "requests"]
