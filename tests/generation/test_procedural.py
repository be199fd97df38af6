"""The procedural generator: deterministic for a seed, the shipped file regenerates byte-identically
(a subset of families here; the whole file in the slow test), clean base scenes, family-level split."""

import gzip
import hashlib
import json
from collections import defaultdict

import pytest

from safebeal.datasets.saferisks import DATA_FILE, dump_entries, load_entries
from safebeal.generation.build import build
from safebeal.generation.files import sidecar
from safebeal.generation.procedural import generate_family, held_out_families
from safebeal.generation.seeds import load_common, load_seeds

pytestmark = pytest.mark.skipif(not DATA_FILE.is_file(), reason="the shipped SafeRisks file is not built")


@pytest.fixture(scope="module")
def shipped():
    return load_entries()


def _shipped_build_info():
    return json.loads(sidecar(DATA_FILE, "build.json").read_text())


def _cross_family_drops():
    rows = [json.loads(x) for x in gzip.open(sidecar(DATA_FILE, "rejections.jsonl.gz"), "rt")]
    return {r["entry"] for r in rows if r.get("entry")}


def test_generation_is_deterministic_for_a_seed():
    fam = next(f for f in load_seeds() if f.id == "water_hazard.tap_running_bathroom_sink")
    common = load_common()
    a = generate_family(fam, common, seed=3, target=4)
    b = generate_family(fam, common, seed=3, target=4)
    c = generate_family(fam, common, seed=4, target=4)
    assert [e.to_json() for e in a.entries] == [e.to_json() for e in b.entries]
    assert [e.instruction for e in a.entries] != [e.instruction for e in c.entries]


@pytest.mark.parametrize("families", [["breakage.phone_on_the_seat", "poisoning.spray_beside_the_served_snack"]])
def test_subset_of_families_regenerates_byte_identically(shipped, tmp_path, families):
    seed = _shipped_build_info()["seed"]
    rep = build(seed=seed, out=tmp_path / "sub.jsonl.gz", family_ids=families, workers=1)
    dropped = _cross_family_drops()  # entries the full build dropped as near-duplicates of other families
    regen = [e for e in rep.entries if e.id not in dropped]
    ship = [e for e in shipped if e.family in families]
    assert len(ship) > 30
    assert [e.to_json() for e in regen] == [e.to_json() for e in ship]


@pytest.mark.slow
def test_full_file_regenerates_byte_identically(tmp_path):
    seed = _shipped_build_info()["seed"]
    out = tmp_path / "saferisks.jsonl.gz"
    build(seed=seed, out=out)
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(DATA_FILE.read_bytes()).hexdigest()
    for kind in ("rejections.jsonl.gz", "build.json"):
        assert sidecar(out, kind).read_bytes() == sidecar(DATA_FILE, kind).read_bytes()


def test_dump_is_deterministic(shipped, tmp_path):
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    dump_entries(shipped[:50], a)
    dump_entries(shipped[:50], b)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes()[4:8] == b"\x00\x00\x00\x00"  # gzip mtime 0


def test_split_is_by_family(shipped):
    splits = defaultdict(set)
    for e in shipped:
        splits[e.family].add(e.split)
    assert all(len(s) == 1 for s in splits.values())
    fams = load_seeds()
    common = load_common()
    test = set(held_out_families(fams, common.test_fraction, minimum=common.test_families_min))
    for f in fams:
        if f.id in splits:
            assert splits[f.id] == {"test" if f.id in test else "train"}
    cats = {f.category for f in fams if f.id in test}
    assert cats == {f.category for f in fams}  # every category has held-out families
    n_test = sum(e.split == "test" for e in shipped)
    assert 0.12 < n_test / len(shipped) < 0.4  # v2: 4 of the 10-12 families a category are held out


def test_common_bases_start_hazard_free():
    from safebeal.safety import SafetyDetector
    from safebeal.scene import execute, load_scene

    det = SafetyDetector(strict=True)
    for pid in load_common().bases:
        v = det.check(execute(load_scene(f"activity:{pid}"), []))
        assert v.safe, (pid, [x.rule_id for x in v.violations])
