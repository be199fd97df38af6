"""Study C (issue 32, item 3): the baselines, the minimum detectable effects and every pairwise difference.

    python experiments/small_scale/run.py --config experiments/small_scale/configs/study_c.yaml --out OUT
    python experiments/small_scale/study_c.py baselines OUT --config experiments/small_scale/configs/study_c.yaml
    python experiments/small_scale/study_c.py tables OUT        # every table, from the kept samples alone

``baselines`` needs the study's ``OUT/work`` (its training pairs). It learns the best surface rule from the pairs
the methods trained on, applies it and the generic rule to the base model's plans, and judges the results with the
benchmark (``run_bench``, replayed outputs); their per-episode samples are kept like a unit's, in
``OUT/samples/generic-rule/`` and ``OUT/samples/surface-rule/``, and the rule learnt in ``OUT/surface_rule.json``.

``tables`` reads only ``OUT/samples/`` and writes ``OUT/study_c.json`` and ``OUT/study_c.md``:
1. the minimum detectable effect first (two-sided 5%, power 80%, t distribution with its real degrees of freedom):
   between seed means (df = seeds - 1 for a method against a baseline; the paired per-seed differences for two
   methods) and, for a single run against another on the same tasks, per task (df = tasks - 1);
2. per eval set and method: SafeR, SSR (safe and successful), SuccR, Exec and the steps run, mean and SD over seeds;
3. every pairwise difference (methods and baselines, whichever way it points) in SafeR, SSR and SuccR, with its t
   statistic, degrees of freedom and MDE.

The baselines (issue 32): the *generic rule* (``safebeal.generation.generic_rule``: after the plan, switch off,
close and unplug everything it touched, keeping what the goal asks for) and the *surface rule*: the edit learnt
from the training pairs that best turns their rejected plans into their chosen ones, judged on verbs and objects
only (for instance "after the plan, switch off what it switched on"), applied to the base model's plans.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
METHODS = ("lora-sft", "dpo", "simpo", "safe-align")
LABELS = {"base": "Base", "lora-sft": "LoRA-SFT", "dpo": "DPO", "simpo": "SimPO", "safe-align": "Safe-Align",
          "generic-rule": "Generic rule (base plans)", "surface-rule": "Surface rule (base plans)"}
BASELINES = ("generic-rule", "surface-rule")
METRICS = (("safe", "SafeR"), ("ssr", "SSR"), ("success", "SuccR"))
#: navigation and looking: never part of a surface rule's edit
MOVES = {"WALK", "RUN", "FIND", "TURNTO", "LOOKAT", "POINTAT", "WATCH"}


class SamplesError(ValueError):
    """The kept samples do not fit together (exit 2, one line)."""


# -- samples ---------------------------------------------------------------------------------------------------
def read_samples(path: Path) -> List[Dict[str, Any]]:
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def indicators(ep: Dict[str, Any]) -> Dict[str, float]:
    """One episode's outcomes: safe (the detector judged the steps that ran and found no violation), success, both."""
    safe = ep.get("safe") is True and not ep.get("parse_error") and not ep.get("generation_error")
    success = ep.get("success") is True
    return {"safe": float(safe), "success": float(success), "ssr": float(safe and success),
            "exec": float(ep.get("executable") is True),
            "steps_run": float(sum(1 for s in ep.get("steps", []) if s.get("ok")))}


def unit_rows(samples: Path) -> Dict[str, Dict[str, Dict[str, Dict[str, float]]]]:
    """``{unit: {dataset: {task_id: indicators}}}`` for every unit with kept samples."""
    out: Dict[str, Dict[str, Dict[str, Dict[str, float]]]] = {}
    for d in sorted(p for p in samples.iterdir() if p.is_dir()):
        for f in sorted(d.glob("*.jsonl.gz")):
            eps = read_samples(f)
            out.setdefault(d.name, {})[f.name[: -len(".jsonl.gz")]] = {e["task_id"]: indicators(e) for e in eps}
    return out


# -- statistics ------------------------------------------------------------------------------------------------
def t_mde(sd: float, n: int) -> Optional[float]:
    """Smallest true mean difference a two-sided 5% t test on ``n`` values with SD ``sd`` (df = n - 1) finds with
    80% power: (t_0.975 + t_0.80) * sd / sqrt(n)."""
    from scipy import stats

    if n < 2 or sd is None or math.isnan(sd):
        return None
    df = n - 1
    return float((stats.t.ppf(0.975, df) + stats.t.ppf(0.80, df)) * sd / math.sqrt(n))


def t_test(values: Sequence[float]) -> Dict[str, Any]:
    """A one-sample t test of mean 0: mean, sd, n, df, t, two-sided p and the MDE."""
    from scipy import stats

    n = len(values)
    mean = statistics.mean(values) if values else float("nan")
    sd = statistics.stdev(values) if n > 1 else float("nan")
    if n < 2:
        return {"mean": mean, "sd": None, "n": n, "df": None, "t": None, "p": None, "mde": None}
    if sd == 0:
        t, p = (0.0, 1.0) if mean == 0 else (math.inf, 0.0)
    else:
        t = mean / (sd / math.sqrt(n))
        p = float(2 * stats.t.sf(abs(t), n - 1))
    return {"mean": mean, "sd": sd, "n": n, "df": n - 1, "t": t, "p": p, "mde": t_mde(sd, n)}


def seeds_of(units: Iterable[str], method: str) -> List[int]:
    tails = (u[len(method) + 2:] for u in units if u.startswith(method + "-s"))
    return sorted(int(t) for t in tails if t.isdigit())


def rate(rows: Dict[str, Dict[str, float]], key: str) -> float:
    return sum(r[key] for r in rows.values()) / len(rows) if rows else float("nan")


def analyse(rows: Dict[str, Dict[str, Dict[str, Dict[str, float]]]]) -> Dict[str, Any]:
    datasets = sorted(rows.get("base", {}))
    methods = [m for m in METHODS if seeds_of(rows, m)]
    systems = ["base"] + methods + [b for b in BASELINES if b in rows]
    doc: Dict[str, Any] = {"datasets": datasets, "systems": systems, "seeds": {m: seeds_of(rows, m) for m in methods},
                           "rates": {}, "pairwise": {}, "mde": {}}

    def runs(system: str, ds: str) -> Dict[Any, Dict[str, Dict[str, float]]]:
        units = [f"{system}-s{s}" for s in seeds_of(rows, system)] if system in methods else [system]
        missing = [u for u in units if ds not in rows[u]]
        if missing:
            raise SamplesError(f"{', '.join(missing)}: no samples for {ds} (the base has them)")
        if system in methods:
            return {s: rows[f"{system}-s{s}"][ds] for s in seeds_of(rows, system)}
        return {None: rows[system][ds]}

    for ds in datasets:
        tasks = sorted(rows["base"][ds])
        for system in systems:
            rs = runs(system, ds)
            for r in rs.values():
                if sorted(r) != tasks:
                    raise SamplesError(f"{system} {ds}: its samples cover other tasks than the base's")
            cell = {}
            for key in ("safe", "ssr", "success", "exec", "steps_run"):
                vals = [rate(r, key) for r in rs.values()]
                cell[key] = {"mean": statistics.mean(vals), "sd": statistics.stdev(vals) if len(vals) > 1 else None,
                             "per_seed": vals}
            doc["rates"].setdefault(ds, {})[system] = cell
        # the MDE, known before the comparisons are read
        n_seeds = min((len(v) for v in doc["seeds"].values()), default=1)
        pooled = {}
        for key, _ in METRICS:
            sds = [doc["rates"][ds][m][key]["sd"] for m in methods if doc["rates"][ds][m][key]["sd"] is not None]
            pooled[key] = math.sqrt(statistics.mean(s * s for s in sds)) if sds else None
        base = doc["rates"][ds]["base"]
        doc["mde"][ds] = {
            "tasks": len(tasks), "seeds": n_seeds,
            "metrics": {key: {"base_rate": base[key]["mean"],
                              # one run against another on the same tasks, from the base's rate: a binomial SD per
                              # task difference of sqrt(2 p (1 - p)) at most (no correlation between the two runs)
                              "one_run_vs_another_per_task": t_mde(
                                  math.sqrt(2 * base[key]["mean"] * (1 - base[key]["mean"])), len(tasks)),
                              "seed_sd_pooled": pooled[key],
                              "method_vs_baseline_seed_means": t_mde(pooled[key], n_seeds) if pooled[key] else None}
                        for key, _ in METRICS}}
        # every pairwise difference, a - b
        pw = []
        for i, a in enumerate(systems):
            for b in systems[i + 1:]:
                ra, rb = runs(a, ds), runs(b, ds)
                row: Dict[str, Any] = {"a": a, "b": b}
                for key, _ in METRICS:
                    if a in methods and b in methods:  # paired by seed (same LoRA init and pair order)
                        common = sorted(set(ra) & set(rb))
                        diffs = [rate(ra[s], key) - rate(rb[s], key) for s in common]
                        test = {**t_test(diffs), "design": "paired by seed"}
                    elif a in methods or b in methods:  # a method's seeds against one deterministic run
                        m, other = (ra, rb) if a in methods else (rb, ra)
                        (fixed,) = other.values()
                        sign = 1 if a in methods else -1
                        diffs = [sign * (rate(r, key) - rate(fixed, key)) for r in m.values()]
                        test = {**t_test(diffs), "design": "seeds against one run"}
                    else:  # two single runs on the same tasks: paired by task
                        (x,), (y,) = ra.values(), rb.values()
                        diffs = [x[t][key] - y[t][key] for t in tasks]
                        test = {**t_test(diffs), "design": "paired by task"}
                    # per task, outcomes averaged over seeds (a second view, with many degrees of freedom)
                    per_task = [statistics.mean(r[t][key] for r in ra.values())
                                - statistics.mean(r[t][key] for r in rb.values()) for t in tasks]
                    test["per_task"] = {k: v for k, v in t_test(per_task).items() if k in ("t", "df", "p", "mde")}
                    row[key] = test
                pw.append(row)
        doc["pairwise"][ds] = pw
    return doc


# -- markdown --------------------------------------------------------------------------------------------------
def _f(x: Optional[float], d: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{d}f}"


def _signed(x: Optional[float]) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.3f}"


def markdown(doc: Dict[str, Any]) -> str:
    from smallscale.settings import DATASET_LABELS

    out = ["# Study C: tables from the kept samples", ""]
    out += ["## Minimum detectable effect (two-sided 5%, power 80%, t with its real degrees of freedom)", "",
            "| eval set | tasks | seeds | metric | base rate | one run against another, per task (df = tasks - 1) | "
            "seed SD (pooled over methods) | method against a baseline, seed means (df = seeds - 1) |",
            "|---|---:|---:|---|---:|---:|---:|---:|"]
    for ds, m in doc["mde"].items():
        for key, name in METRICS:
            x = m["metrics"][key]
            out.append(f"| {DATASET_LABELS.get(ds, ds)} | {m['tasks']} | {m['seeds']} | {name} | {_f(x['base_rate'])} | "
                       f"{_f(x['one_run_vs_another_per_task'])} | {_f(x['seed_sd_pooled'])} | "
                       f"{_f(x['method_vs_baseline_seed_means'])} |")
    out += ["", "Two methods are compared paired by seed (df = seeds - 1); each row below gives that pair's own MDE.", ""]
    if doc.get("pair_rivals"):
        r = doc["pair_rivals"]
        t = r["targets"]
        out += [f"**The pairs the methods trained on** ({r['pairs']} pairs, {r['families']} families): rivals scored "
                "across families, target in brackets:", "",
                f"- length {_f(r['rivals']['length'])} ({t['rivals.length']}), object names "
                f"{_f(r['rivals']['objects'])} ({t['rivals.objects']}), verbs {_f(r['rivals']['verbs'])}, first "
                f"diverging action {_f(r['rivals']['first_action'])}, tokens {_f(r['rivals']['tokens'])};",
                f"- chosen plan longer {_f(r['longer_is_chosen'])}, shorter {_f(r['shorter_is_chosen'])} (each "
                f"{t['longer_is_chosen']}); both sides reach the goal {_f(r['goal_reached_both'])}.", ""]
    if doc.get("surface_rule"):
        r = doc["surface_rule"]
        out += [f"**The surface rule** learnt from those pairs turns {r['rejected_fixed']} of {r['pairs']} rejected "
                f"plans into their chosen plan (as bags of steps) and changes {r['chosen_changed']} chosen plans:", ""]
        out += [f"- `{json.dumps(x, sort_keys=True)}`" for x in r["rules"]] + [""]
    for ds in doc["datasets"]:
        out += [f"## {DATASET_LABELS.get(ds, ds)}", "",
                "| system | SafeR | SSR | SuccR | Exec | steps run |", "|---|---:|---:|---:|---:|---:|"]
        for s in doc["systems"]:
            c = doc["rates"][ds][s]

            def cell(k: str) -> str:
                sd = c[k]["sd"]
                return _f(c[k]["mean"], 2 if k == "steps_run" else 3) + (f" ± {sd:.3f}" if sd is not None else "")
            out.append(f"| {LABELS.get(s, s)} | {cell('safe')} | {cell('ssr')} | {cell('success')} | {cell('exec')} | "
                       f"{cell('steps_run')} |")
        out += ["", "Every pairwise difference, a - b (t, df, two-sided p, MDE of that comparison):", "",
                "| a | b | design | SafeR | SSR | SuccR |", "|---|---|---|---|---|---|"]
        for r in doc["pairwise"][ds]:
            def d(k: str) -> str:
                x = r[k]
                if x["t"] is None:
                    return _signed(x["mean"])
                return (f"{_signed(x['mean'])} (t {x['t']:+.2f}, df {x['df']}, p {x['p']:.3f}, MDE {_f(x['mde'])})")
            out.append(f"| {LABELS.get(r['a'], r['a'])} | {LABELS.get(r['b'], r['b'])} | {r['safe']['design']} | "
                       f"{d('safe')} | {d('ssr')} | {d('success')} |")
        out.append("")
    return "\n".join(out) + "\n"


# -- the surface rule ------------------------------------------------------------------------------------------
Step = Tuple[str, Tuple[Tuple[str, int], ...]]


def parse(line: str) -> Optional[Step]:
    """``(verb, ((class, id), ...))`` of a script line; None when it does not parse."""
    from safebeal.scene import ScriptSyntaxError, parse_line

    try:
        a = parse_line(line)
    except ScriptSyntaxError:
        return None
    return str(a.action), tuple((o.name, int(o.id)) for o in a.args)


def _lines(text: str) -> List[str]:
    return [ln.strip() for ln in text.split("\n") if ln.strip()]


def _fmt(verb: str, objs: Sequence[Tuple[str, int]]) -> str:
    return f"[{verb}]" + "".join(f" <{n}> ({i})" for n, i in objs)


def _apply_one(rule: Dict[str, Any], lines: Sequence[str], objects: Optional[Sequence[Tuple[str, int]]]) -> List[str]:
    parsed = [parse(ln) for ln in lines]
    if rule["kind"] == "drop":
        return [ln for ln, p in zip(lines, parsed) if p is None or p[0] != rule["verb"]]
    if rule["kind"] == "swap":
        out: List[str] = []
        for ln, p in zip(lines, parsed):
            if p is None or p[0] != rule["verb"] or len(p[1]) != 2 or p[1][1][0] != rule["from"]:
                out.append(ln)
                continue
            pick = None
            for verb, cls in rule["to"]:
                if objects is None:  # judged on class names only: any id will do
                    pick = (verb, (cls, 0))
                    break
                ids = [i for c, i in objects if c == cls]
                if ids:
                    pick = (verb, (cls, ids[0]))
                    break
            if pick is None:
                out.append(ln)
                continue
            out += [_fmt("WALK", [pick[1]]), _fmt(pick[0], [p[1][0], pick[1]])]
        return out
    last: Dict[Tuple[str, int], str] = {}
    order: List[Tuple[str, int]] = []
    for p in parsed:
        if p is None or not p[1]:
            continue
        obj = p[1][0]
        if p[0] in (rule["after"], rule["add"]):
            last[obj] = p[0]
            if obj not in order:
                order.append(obj)
    out = list(lines)
    for obj in order:
        if last[obj] == rule["after"]:
            out += [_fmt("WALK", [obj]), _fmt(rule["add"], [obj])]
    return out


def apply_rule(rules: Sequence[Dict[str, Any]], lines: Sequence[str],
               objects: Optional[Sequence[Tuple[str, int]]] = None) -> List[str]:
    """The surface rule (a list of edits, applied in turn) applied to a plan. The edits:
    - ``{"kind": "close", "after": U, "add": V}``: for each object the plan does U to last, a walk to it and V;
    - ``{"kind": "drop", "verb": U}``: the lines doing U removed;
    - ``{"kind": "swap", "verb": U, "from": A, "to": [[V, B], ...]}``: a line ``[U] <x> <A>`` becomes a walk to B and
      ``[V] <x> <B>``, B the first of the list the task lists (``objects``: its (class, id) pairs); with no
      ``objects`` (judging the rule on pairs) the first B, id 0."""
    out = list(lines)
    for rule in rules:
        out = _apply_one(rule, out, objects)
    return out


def _bag(lines: Sequence[str]) -> Counter:
    """The plan's non-moving steps, by verb and object classes (ids left out)."""
    return Counter((p[0], tuple(c for c, _ in p[1])) for p in (parse(ln) for ln in lines)
                   if p is not None and p[0] not in MOVES)


def _candidates(pairs: Sequence[Dict[str, Any]]) -> Counter:
    cands: Counter = Counter()
    swaps: Dict[Tuple[str, str], Counter] = {}
    for p in pairs:
        ch, rj = _lines(p["chosen"]), _lines(p["rejected"])
        added, removed = _bag(ch) - _bag(rj), _bag(rj) - _bag(ch)
        for (verb, objs) in added:
            if len(objs) != 1:  # an added step names one object (switch off, close, unplug, ...)
                continue
            before = [q[0] for q in (parse(ln) for ln in rj) if q and [c for c, _ in q[1][:1]] == list(objs)
                      and q[0] not in MOVES and q[0] != verb]
            if before:
                cands[json.dumps({"kind": "close", "after": before[-1], "add": verb}, sort_keys=True)] += 1
        if removed and not added:
            for (verb, _objs) in removed:
                cands[json.dumps({"kind": "drop", "verb": verb}, sort_keys=True)] += 1
        if len(removed) == 1 and len(added) == 1:
            ((rv, ro),), ((av, ao),) = removed.keys(), added.keys()
            if len(ro) == 2 and len(ao) == 2 and ro[0] == ao[0] and ro[1] != ao[1]:
                swaps.setdefault((rv, ro[1]), Counter())[(av, ao[1])] += 1
    for (verb, frm), to in swaps.items():
        rule = {"kind": "swap", "verb": verb, "from": frm, "to": [list(k) for k, _ in to.most_common()]}
        cands[json.dumps(rule, sort_keys=True)] += sum(to.values())
    return cands


Parsed = Tuple[List[str], List[str], Counter, bool]


def _score(rules: Sequence[Dict[str, Any]], plans: Sequence[Parsed]) -> Tuple[int, int]:
    """(rejected plans turned into their chosen plan's bag, chosen plans the rules change) over ``plans``: each
    pair's (chosen lines, rejected lines, chosen bag, whether the bags differ). Pairs whose plans differ only in
    order cannot be fixed by such edits and do not count."""
    fixed = changed = 0
    for ch, rj, bag, differ in plans:
        if differ and _bag(apply_rule(rules, rj)) == bag:
            fixed += 1
        if _bag(apply_rule(rules, ch)) != bag:
            changed += 1
    return fixed, changed


def learn_surface_rule(pairs: Sequence[Dict[str, Any]], max_rules: int = 3, pool: int = 30) -> Dict[str, Any]:
    """The best surface rule the pairs teach: edits of the kinds :func:`apply_rule` knows, suggested by the pairs'
    differences, chosen greedily (at most ``max_rules``) to maximise the rejected plans turned into their chosen
    plan minus the chosen plans changed."""
    cands = [json.loads(k) for k, _ in _candidates(pairs).most_common(pool)]
    plans = []  # parsed once: every candidate is scored on every pair
    for p in pairs:
        ch, rj = _lines(p["chosen"]), _lines(p["rejected"])
        bag = _bag(ch)
        plans.append((ch, rj, bag, _bag(rj) != bag))
    chosen: List[Dict[str, Any]] = []
    best = (0, 0)
    trail = []
    for _ in range(max_rules):
        scored = []
        for c in cands:
            if c in chosen:
                continue
            f, ch = _score(chosen + [c], plans)
            scored.append((f - ch, f, ch, json.dumps(c, sort_keys=True), c))
        if not scored:
            break
        scored.sort(key=lambda r: (-r[0], r[3]))
        top = scored[0]
        if top[0] <= best[0] - best[1]:
            break
        chosen.append(top[4])
        best = (top[1], top[2])
        trail.append({"rule": top[4], "rejected_fixed": top[1], "chosen_changed": top[2]})
    return {"pairs": len(pairs), "rules": chosen, "rejected_fixed": best[0], "chosen_changed": best[1],
            "greedy_steps": trail}


# -- baselines -------------------------------------------------------------------------------------------------
def record_pair_rivals(pairs_file: Path, dest: Path) -> Dict[str, Any]:
    """The rivals of the pairs the methods trained on (``safebeal pairs stats``' figures, issue 32 item 2)."""
    from safebeal.align.data import load_pairs
    from safebeal.align.pair_stats import pair_stats

    pairs = load_pairs(pairs_file, "dpo")
    st = pair_stats(pairs)
    doc = {"pairs": len(pairs),
           **{k: st[k] for k in ("rivals", "longer_is_chosen", "shorter_is_chosen", "goal_reached_both", "families",
                                 "targets")}}
    dest.write_text(json.dumps(doc, indent=1))
    return doc


def baselines(out: Path, config: Path) -> None:
    sys.path.insert(0, str(HERE))
    from smallscale import data
    from smallscale.settings import load_settings
    from smallscale.stages import keep_samples
    from safebeal.bench.runner import RunConfig, run_bench
    from safebeal.datasets.saferisks import load_entries
    from safebeal.generation.generic_rule import tidy_plan

    ev = load_settings(config).eval
    pairs = data.read_jsonl(out / "work" / "data" / "pairs.jsonl")
    record_pair_rivals(out / "work" / "data" / "pairs.jsonl", out / "pair_rivals.json")
    learnt = learn_surface_rule(pairs)
    (out / "surface_rule.json").write_text(json.dumps(learnt, indent=1))
    rules = learnt["rules"]
    print(f"surface rule: {rules} (turns {learnt['rejected_fixed']} of {len(pairs)} rejected plans into their chosen "
          f"plan, changes {learnt['chosen_changed']} chosen ones)")
    entries = {e.id: e for e in load_entries()}
    objects = {i: [(c, int(n)) for c, n in e.objects] for i, e in entries.items()}  # what each prompt lists
    samples = {ds: read_samples(f) for ds, f in
               ((f.name[: -len(".jsonl.gz")], f) for f in sorted((out / "samples" / "base").glob("*.jsonl.gz")))}
    for name in BASELINES:
        for ds, eps in samples.items():
            rows = []
            for e in eps:
                plan = list(e.get("script") or [])
                if name == "generic-rule" and e["task_id"] in entries and plan:
                    ent = entries[e["task_id"]]
                    plan = tidy_plan(ent.scene(), plan, ent.goal_spec())
                elif name == "surface-rule" and plan:
                    plan = apply_rule(rules, plan, objects.get(e["task_id"]))
                rows.append({"task_id": e["task_id"], "output": "\n".join(plan)})
            work = out / "work" / "baselines" / name
            replay = data.write_jsonl(rows, work / ds / f"{name}.jsonl")  # the replayed planner is named after it
            spec = data.dataset_spec(ds, ev.limit, ev.samples.get(ds, 0))
            run_bench(RunConfig(planners=[f"replay:path={replay}"], dataset=spec, out=str(work / "bench" / ds),
                                workers=1, overwrite=True))
            keep_samples(work / "bench", out / "samples" / name, [ds])  # kept as a unit's samples are
            print(f"{name} on {ds}: {len(rows)} plans judged")


def tables(out: Path) -> Dict[str, Any]:
    sys.path.insert(0, str(HERE))
    doc = analyse(unit_rows(out / "samples"))
    if (out / "surface_rule.json").exists():
        doc["surface_rule"] = {k: v for k, v in json.loads((out / "surface_rule.json").read_text()).items()
                               if k != "greedy_steps"}
    if (out / "pair_rivals.json").exists():
        doc["pair_rivals"] = json.loads((out / "pair_rivals.json").read_text())
    (out / "study_c.json").write_text(json.dumps(doc, indent=1))
    (out / "study_c.md").write_text(markdown(doc))
    return doc


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("baselines", "tables"))
    ap.add_argument("out", type=Path, help="the study's --out directory")
    ap.add_argument("--config", type=Path, default=HERE / "configs" / "study_c.yaml",
                    help="the study's config (baselines: its eval sets and samples)")
    args = ap.parse_args(argv)
    if not (args.out / "samples" / "base").is_dir():
        print(f"{args.out}: no kept samples of the base model (samples/base/); run the study first", file=sys.stderr)
        return 2
    try:
        if args.command == "baselines":
            baselines(args.out, args.config)
        doc = tables(args.out)
    except SamplesError as exc:
        print(f"{args.out}: {exc}", file=sys.stderr)
        return 2
    print((args.out / "study_c.md").read_text())
    return 0 if doc else 1


if __name__ == "__main__":
    sys.exit(main())
