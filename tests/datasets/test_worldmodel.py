"""The WorldModel loader: a small hand-written fixture, bad input, and the real data when it is present."""

from pathlib import Path

import pytest

from safebeal.datasets.base import DATASETS
from safebeal.errors import SafebealError

FIXTURES = Path(__file__).parent / "fixtures" / "worldmodel"
REAL = Path("/work/shared/data/worldmodel")


def test_file_fixture():
    tasks = DATASETS.create(f"worldmodel:path={FIXTURES / 'plan_gen_small.jsonl'},scenes=false").tasks()
    assert [t.id for t in tasks] == ["plan_gen_small:1", "plan_gen_small:2"]
    t = tasks[0]
    assert t.dataset == "worldmodel" and t.scene is None and t.goal is None and t.objects == ()
    assert t.prompt.startswith("Q: How to make toast?") and t.prompt.endswith("The sink is in the bathroom.\nA:")
    assert t.instruction == "How to wash hands?"  # the last question of the few-shot prompt
    assert t.description == "Given items include soap, sink, bathroom. The sink is in the bathroom."
    assert t.reference == "Walk to bathroom. Walk to sink. Switch on faucet. Grab soap. Wash hands. Switch off faucet."
    assert tasks[1].instruction == "How to read a book?" and t.meta["line"] == 1


def test_folder_reads_json_and_jsonl_files_in_name_order():
    ds = DATASETS.create(f"worldmodel:{FIXTURES}")
    assert [t.id for t in ds.tasks()] == ["plan_gen_more:1", "plan_gen_small:1", "plan_gen_small:2"]
    assert ds.config() == {"name": "worldmodel", "path": str(FIXTURES), "limit": 0}
    assert len(DATASETS.create(f"worldmodel:path={FIXTURES},limit=2").tasks()) == 2


def test_prompt_is_sent_as_is():
    from safebeal.planners.prompts import build_messages

    t = DATASETS.create(f"worldmodel:path={FIXTURES / 'plan_gen_more.json'}").tasks()[0]
    assert build_messages(t) == [{"role": "user", "content": "Q: How to drink water?\nA:"}]


@pytest.mark.parametrize("content,message", [
    ('{"input": "x", "ref": "y"}\n{"input": "x"', "bad.jsonl:2: not valid JSON"),
    ('{"input": "x"}', "bad.jsonl:1: missing key(s) 'ref'"),
    ('["x", "y"]', "bad.jsonl:1: expected a JSON object"),
    ('{"input": "x", "ref": 3}', "bad.jsonl:1: 'ref' must be a string"),
])
def test_bad_lines_name_file_and_line(tmp_path, content, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(SafebealError, match=message.replace("(", r"\(").replace(")", r"\)")):
        DATASETS.create(f"worldmodel:path={p}").tasks()


def test_missing_path(tmp_path):
    with pytest.raises(SafebealError, match="needs a file or folder"):
        DATASETS.create("worldmodel")
    with pytest.raises(SafebealError, match="no such file or folder"):
        DATASETS.create(f"worldmodel:path={tmp_path / 'nope'}").tasks()
    with pytest.raises(SafebealError, match="no \\*.json or \\*.jsonl file"):
        DATASETS.create(f"worldmodel:path={tmp_path}").tasks()


def test_bench_scores_fixture_by_rouge_l():
    from safebeal.bench.evaluate import evaluate_output
    from safebeal.bench.summary import summarize

    tasks = DATASETS.create(f"worldmodel:path={FIXTURES / 'plan_gen_small.jsonl'},scenes=false").tasks()
    eps = [evaluate_output(tasks[0], "m", tasks[0].reference + "\nQ: ...", None, None),
           evaluate_output(tasks[1], "m", "Walk to living room. Grab book.", None, None)]
    assert eps[0].rouge_l == pytest.approx(1.0, abs=1e-7)
    # hyp words {Walk, to, living, room, Grab, book} = 6; ref adds {Sit, on, couch, Read} = 10; union LCS 6
    r = 6 / 10
    assert eps[1].rouge_l == pytest.approx(2 * r / (1 + r + 1e-8), abs=1e-12)
    s = summarize([e.model_dump() for e in eps])
    assert s["n"] == 2 and s["rouge_l"] == pytest.approx((eps[0].rouge_l + eps[1].rouge_l) / 2)
    assert s["executable_rate"] is None and s["safe_rate"] is None


@pytest.mark.skipif(not (REAL / "eval").is_dir(), reason="WorldModel reference copy not present")
def test_real_eval_sets():
    tasks = DATASETS.create(f"worldmodel:path={REAL / 'eval'}").tasks()
    from collections import Counter

    assert Counter(t.id.split(":")[0] for t in tasks) == {"plan_gen": 175, "plan_gen_confusing": 135,
                                                          "plan_gen_unseen": 54, "plan_gen_unseen_confusing": 43}
    assert all(t.prompt.rstrip().endswith("A:") and t.reference for t in tasks)
    assert tasks[0].instruction == "How to wash hands?"
