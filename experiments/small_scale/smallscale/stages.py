"""The study's stages: data -> tokenizer and random model -> base SFT -> alignment runs and alpha sweep (each
trained, then benchmarked) -> report.

Everything heavy goes through the project's public code: ``safebeal.align.pairs.build_pairs`` for the pairs,
``safebeal.align.methods.train`` for every training run (the base with ``lora=False``, the four methods with
LoRA), ``safebeal.bench.runner.run_bench`` with the ``zero-shot`` planner on the ``hf`` backend and the
``compact`` template for every evaluation.

Work goes to ``<out>/work/``; each unit (one trained model and its evaluations) writes ``result.json`` there and
is skipped on a later run when its inputs are unchanged, so an interrupted study resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.errors import SafebealError

from . import data
from .settings import METHOD_LABELS, StudySettings


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _quiet() -> None:
    """Progress bars of datasets/transformers off (the study logs its own progress)."""
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass
    import warnings

    warnings.filterwarnings("ignore")


@contextlib.contextmanager
def captured(path: Path):
    """Send stdout/stderr (trainer log lines, warnings) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh, contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
        yield


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


#: the study code whose changes make cached stages stale (report.py only rewrites tables: not in here)
_STUDY_CODE = ("settings.py", "data.py", "modelling.py", "stages.py")
_CODE_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".jsonl", ".gz", ".txt", ".jinja"}


def code_fingerprint() -> str:
    """A digest of the installed ``safebeal`` package (code, rules, object knowledge, shipped data, templates)
    and of the study's own stage code. It is part of every cache key, so a rerun after a change to any of them
    (a detector rule, a mutation operator, the trainer) redoes the stages instead of reusing stale results."""
    import hashlib

    import safebeal

    h = hashlib.sha256()
    pkg = Path(safebeal.__file__).resolve().parent
    files = [(f"safebeal/{f.relative_to(pkg).as_posix()}", f) for f in sorted(pkg.rglob("*"))
             if f.is_file() and f.suffix in _CODE_SUFFIXES and "__pycache__" not in f.parts]
    here = Path(__file__).resolve().parent
    files += [(f"smallscale/{name}", here / name) for name in _STUDY_CODE]
    for name, f in files:
        h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def read_done(path: Path, key: str) -> Optional[Dict[str, Any]]:
    """The stored result at ``path`` if it was made from inputs with digest ``key``."""
    try:
        doc = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return doc if doc.get("key") == key else None


# -- training-run helpers --------------------------------------------------------------------------------
def losses(run_dir: Path) -> List[float]:
    """Training losses of a run, in step order (``train_log.jsonl`` written by safebeal.align)."""
    out = []
    p = run_dir / "train_log.jsonl"
    if not p.exists():
        return out
    for line in p.read_text().splitlines():
        rec = json.loads(line)
        if isinstance(rec.get("loss"), (int, float)):
            out.append(float(rec["loss"]))
    return out


def train_run(method: str, options: Dict[str, Any], log_path: Path) -> Dict[str, Any]:
    """One training run (config checked by ``safebeal.align.config.build_config``, trained by
    ``safebeal.align.methods.train``); its loss curve and time."""
    from safebeal.align.config import build_config
    from safebeal.align.methods import train

    cfg = build_config(method, overrides=options)
    with captured(log_path):
        result = train(cfg)
    curve = losses(Path(cfg.out))
    last = result.last_log
    return {"method": method, "steps": result.steps, "seconds": round(result.seconds, 2), "n_pairs": result.n_pairs,
            "losses": curve, "train_loss": result.metrics.get("train_loss"),
            "train_runtime": result.metrics.get("train_runtime"),
            "pair_accuracy": last.get("rewards/accuracies"), "reward_margin": last.get("rewards/margins")}


# -- evaluation --------------------------------------------------------------------------------------------
_SUMMARY_KEYS = ("n", "executable_rate", "success_rate", "safe_rate", "safe_rate_at_success", "safe_rate_parsed",
                 "rouge_l", "intervals", "violations_by_category", "violations_by_kind",
                 "episodes_with_violation_by_category", "episodes_with_violation_by_kind", "outcomes", "failures")


def planner_spec(model_dir: Path, max_new_tokens: int, batch_size: int, device: str = "cpu",
                 grammar: Optional[str] = None) -> str:
    return (f"zero-shot:backend=hf:model={model_dir},max_new_tokens={max_new_tokens},batch_size={batch_size},"
            f"device={device}" + (f",grammar={grammar}" if grammar else "") + f",template={data.TEMPLATE}")


def evaluate(model_dir: Path, datasets: Sequence[str], limit: int, max_new_tokens: int, batch_size: int,
             workers: int, bench_root: Path, log_path: Path, samples: Optional[Dict[str, int]] = None,
             device: str = "cpu", grammar: Optional[str] = None) -> Dict[str, Any]:
    """Benchmark one model on each dataset with ``run_bench`` (the model is loaded once)."""
    from safebeal.bench.runner import RunConfig, run_bench
    from safebeal.planners.planners import PLANNERS

    spec = planner_spec(model_dir, max_new_tokens, batch_size, device, grammar)
    out: Dict[str, Any] = {}
    with captured(log_path):
        planner = PLANNERS.create(spec)
        try:
            for ds in datasets:
                t0 = time.perf_counter()
                summary = run_bench(RunConfig(planners=[planner.spec], dataset=data.dataset_spec(ds, limit, (samples or {}).get(ds, 0)),
                                              out=str(bench_root / ds), workers=workers, overwrite=True),
                                    planners=[planner])
                (row,) = summary.values()
                out[ds] = {k: row.get(k) for k in _SUMMARY_KEYS}
                out[ds]["seconds"] = round(time.perf_counter() - t0, 2)
                if ds == "virtualhome":
                    out[UNSEEN] = unseen_subset(bench_root / ds)
        finally:
            planner.backend.close()
    return out


UNSEEN = "virtualhome-unseen"
#: every unit's per-episode samples, kept beside the tables: ``<out>/samples/<unit>/<dataset>.jsonl.gz``
SAMPLES = "samples"


def unseen_subset(run_dir: Path) -> Dict[str, Any]:
    """The metrics of a virtualhome run restricted to the programs outside the ActivityPrograms training split
    (281 of the 342 tasks are training programs: same task, scene and ground truth as an SFT example)."""
    from safebeal.bench.rundir import RunDir

    return _unseen(RunDir(run_dir).load())


def _unseen(episodes: Sequence[Any]) -> Dict[str, Any]:
    from safebeal.bench.summary import summarize
    from safebeal.datasets.activity_programs import split

    train = set(split()["train"])
    row = summarize(e.model_dump() for e in episodes if e.task_id not in train)
    return {k: row.get(k) for k in _SUMMARY_KEYS}


def keep_samples(bench_root: Path, dest: Path, datasets: Sequence[str]) -> List[str]:
    """Copy each dataset's ``samples.jsonl`` of a unit's benchmark runs to ``dest/<dataset>.jsonl.gz`` (gzip with
    no name or time in its header, so the same samples give the same bytes); returns the datasets kept."""
    import gzip

    kept = []
    for ds in datasets:
        src = bench_root / ds / "samples.jsonl"
        if not src.exists():
            continue
        dest.mkdir(parents=True, exist_ok=True)
        with open(dest / f"{ds}.jsonl.gz", "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write(src.read_bytes())
        kept.append(ds)
    return kept


def eval_from_samples(unit_samples: Path) -> Dict[str, Dict[str, Any]]:
    """A unit's evaluation rows recomputed from its kept samples (``keep_samples``), as ``evaluate`` reports them
    (without ``seconds``): ``{dataset: {metric: value}}``, with the unseen virtualhome subset."""
    import gzip

    from safebeal.bench.records import Episode
    from safebeal.bench.summary import summarize

    out: Dict[str, Dict[str, Any]] = {}
    for f in sorted(unit_samples.glob("*.jsonl.gz")):
        ds = f.name[: -len(".jsonl.gz")]
        with gzip.open(f, "rt") as fh:
            eps = [Episode.model_validate_json(line) for line in fh if line.strip()]
        row = summarize(e.model_dump() for e in eps)
        out[ds] = {k: row.get(k) for k in _SUMMARY_KEYS}
        if ds == "virtualhome":
            out[UNSEEN] = _unseen(eps)
    return out


# -- units: one model, trained (except the base) and evaluated ------------------------------------------
@dataclasses.dataclass
class Unit:
    name: str  # e.g. "dpo-s1", "sweep-length-a0.4-s0", "base"
    method: Optional[str]  # safebeal train method; None: evaluate the base only
    options: Dict[str, Any]  # safebeal train options (without model/data/out)
    datasets: List[str]
    role: str  # "main" or "sweep" or "main+sweep"
    label: str = ""  # Table 1 method label
    seed: Optional[int] = None

    def train_key(self) -> str:
        return digest({"method": self.method, "options": self.options})


def run_unit(unit: Unit, ctx: Dict[str, Any]) -> Dict[str, Any]:
    """Train (unless base) and evaluate one unit; cached in ``<work>/units/<name>/result.json``."""
    _quiet()
    work = Path(ctx["work"])
    udir = work / "units" / unit.name
    key = digest({"unit": dataclasses.asdict(unit), "base": ctx["base_key"], "eval": ctx["eval"],
                  "code": ctx["code"]})
    done = read_done(udir / "result.json", key)
    if done is not None:
        if ctx.get("samples_dir"):
            keep_samples(udir / "bench", Path(ctx["samples_dir"]) / unit.name, unit.datasets)
        return {**done, "cached": True}
    t0 = time.perf_counter()
    udir.mkdir(parents=True, exist_ok=True)
    res: Dict[str, Any] = {"key": key, "unit": dataclasses.asdict(unit)}
    if unit.method is None:
        model_dir = Path(ctx["base_dir"])
    else:
        model_dir = udir / "model"
        opts = {**unit.options, "model": ctx["base_dir"], "data": ctx["pairs"], "out": str(model_dir),
                "overwrite": True, "progress": False, "device": ctx.get("device", "cpu")}
        res["train"] = train_run(unit.method, opts, udir / "train.out")
    te = time.perf_counter()
    ev = ctx["eval"]
    res["eval"] = evaluate(model_dir, unit.datasets, ev["limit"], ev["max_new_tokens"], ev["batch_size"],
                           ev["workers"], udir / "bench", udir / "eval.out", ev.get("samples"),
                           ctx.get("device", "cpu"), ev.get("grammar"))
    res["seconds"] = {"train": round(te - t0, 2), "eval": round(time.perf_counter() - te, 2)}
    if ctx.get("samples_dir"):
        keep_samples(udir / "bench", Path(ctx["samples_dir"]) / unit.name, unit.datasets)
    if unit.method is not None and not ctx["keep_models"]:
        for f in list(model_dir.glob("*.safetensors")) + list(model_dir.glob("adapter/*.safetensors")):
            f.unlink()
    (udir / "result.json").write_text(json.dumps(res, indent=1))
    return res


def _pool_run(args: Tuple[Unit, Dict[str, Any]]) -> Dict[str, Any]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run_unit(*args)


#: paths inside <out>/work: not part of any cache key, so a study folder can be moved or copied and still resume
_PATH_OPTIONS = ("model", "data", "out")


def base_key(opts: Dict[str, Any], init_info: Dict[str, Any], init_key: str) -> str:
    """The base stage's cache key: its training options without the paths, and the initial model's key."""
    return digest({"opts": {k: v for k, v in opts.items() if k not in _PATH_OPTIONS}, "init": init_info,
                   "init_key": init_key})


# -- the study ------------------------------------------------------------------------------------------------
class Study:
    def __init__(self, settings: StudySettings, out: Path, smoke: bool = False):
        self.s = settings
        self.out = Path(out).resolve()
        self.work = self.out / "work"
        self.smoke = smoke
        self.timings: Dict[str, float] = {}
        self.info: Dict[str, Any] = {}
        self.code = code_fingerprint()
        if "," in str(self.out):
            raise SafebealError(f"--out {self.out}: the path may not contain ',' (it goes into planner specs)")

    def _stage(self, name: str, fn, *args):
        log(f"stage {name} ...")
        t0 = time.perf_counter()
        result = fn(*args)
        self.timings[name] = round(time.perf_counter() - t0, 2)
        log(f"stage {name} done in {self.timings[name]:.1f} s")
        return result

    # 1. data ------------------------------------------------------------------------------------------------
    def stage_data(self) -> Dict[str, Any]:
        d = self.s.data
        sr_ok, sr_why = data.saferisks_status()
        use_sr = d.use_saferisks and sr_ok
        if d.use_saferisks and not sr_ok:
            log(f"SafeRisks unavailable, running without it: {sr_why}")
        self.info["saferisks"] = {"available": sr_ok, "status": sr_why, "used": use_sr}
        ddir = self.work / "data"
        key = digest({"data": d.model_dump(), "use_sr": use_sr, "sr": sr_why, "align_limit": self.s.align.pair_limit,
                      "code": self.code})
        done = read_done(ddir / "data.json", key)
        if done is None:
            sft = data.sft_examples(d.sft_limit, use_sr, d.saferisks_limit, d.activity, d.unsafe_share, d.pair_seed,
                                    d.id_holdout)
            pairs, stats = data.build_compact_pairs(d.pair_seed, d.pair_limit, d.per_operator, d.max_tries,
                                                    d.workers, use_sr, d.saferisks_pairs, tuple(d.pair_sources),
                                                    d.id_holdout)
            rows = [p.to_dict() for p in pairs]
            if not rows:
                raise SafebealError("the pair builder made no pairs; nothing to align with")
            used = data.subsample(rows, self.s.align.pair_limit, d.pair_seed)
            data.write_jsonl(sft, ddir / "sft.jsonl")
            data.write_jsonl(used, ddir / "pairs.jsonl")
            data.write_jsonl(rows, ddir / "pairs_all.jsonl")
            done = {"key": key, "sft_examples": len(sft),
                    "sft_by_source": {s: sum(1 for r in sft if r["source"] == s)
                                      for s in ("activity", "saferisks", "saferisks-unsafe")},
                    "pairs_built": len(rows), "pairs_used": len(used),
                    "pair_stats": {k: stats.get(k) for k in ("by_category", "by_source", "by_split", "prefix_actions",
                                                             "safe_plans", "tasks", "saferisks", "seconds")}}
            (ddir / "data.json").write_text(json.dumps(done, indent=1))
        self.info["data"] = {k: v for k, v in done.items() if k != "key"}
        self.info["data_key"] = key
        self.info["code"] = self.code
        return done

    # 2. tokenizer + random model ---------------------------------------------------------------------------
    def stage_model(self) -> Dict[str, Any]:
        from . import modelling

        mdir = self.work / "init"
        key = digest({"tok": self.s.tokenizer.model_dump(), "model": self.s.model.model_dump(),
                      "data": self.info["data"], "data_key": self.info["data_key"]})
        done = read_done(mdir / "init.json", key)
        if done is None:
            sft = data.read_jsonl(self.work / "data" / "sft.jsonl")
            pairs = data.read_jsonl(self.work / "data" / "pairs_all.jsonl")
            tok = modelling.train_tokenizer(data.corpus(sft, pairs), self.s.tokenizer.vocab_size, mdir,
                                            self.s.model.max_position_embeddings)
            size = modelling.init_model(tok, self.s.model, mdir, seed=self.s.base.seed)
            lengths = {"sft": modelling.token_lengths(tok, sft), "pairs_chosen": modelling.token_lengths(tok, pairs),
                       "pairs_rejected": modelling.token_lengths(
                           tok, [{"prompt": p["prompt"], "chosen": p["rejected"]} for p in pairs])}
            done = {"key": key, "vocab_size": len(tok), **size, "token_lengths": lengths}
            (mdir / "init.json").write_text(json.dumps(done, indent=1))
        self.info["model"] = {k: v for k, v in done.items() if k != "key"}
        self.info["model_key"] = key
        longest = done["token_lengths"]["sft"]["completion"]["max"]
        if longest > self.s.eval.max_new_tokens:
            log(f"note: the longest training plan has {longest} tokens, more than eval.max_new_tokens="
                f"{self.s.eval.max_new_tokens}")
        return done

    # 3. base SFT --------------------------------------------------------------------------------------------
    def stage_base(self) -> Dict[str, Any]:
        b = self.s.base
        bdir = self.work / "base"
        opts = {"model": str(self.work / "init"), "data": str(self.work / "data" / "sft.jsonl"), "out": str(bdir),
                "lora": False, "lr": b.lr, "epochs": b.epochs, "max_steps": b.max_steps, "batch_size": b.batch_size,
                "warmup_ratio": b.warmup_ratio, "weight_decay": b.weight_decay, "max_length": b.max_length,
                "seed": b.seed, "overwrite": True, "progress": False, "device": self.s.device,
                # plan lengths vary from 20 to 600 tokens: grouping batches by length halves the padded compute
                "group_by_length": True}
        key = base_key(opts, self.info["model"], self.info["model_key"])
        done = read_done(bdir / "base.json", key)
        if done is None or not (bdir / "model.safetensors").exists():
            import torch

            _quiet()
            threads = torch.get_num_threads()
            torch.set_num_threads(b.threads)
            try:
                train = train_run("sft", opts, self.work / "base.out")
            finally:
                torch.set_num_threads(threads)
            done = {"key": key, "train": train}
            (bdir / "base.json").write_text(json.dumps(done, indent=1))
        self.info["base"] = {"key": key, "train": done["train"]}
        return done

    # 4+5. alignment units and sweep units, each trained and benchmarked ------------------------------------
    def units(self, seeds: Sequence[int]) -> List[Unit]:
        a, sw = self.s.align, self.s.sweep
        common = {"lr": a.lr, "max_steps": a.max_steps, "batch_size": a.batch_size, "lora": True,
                  "lora_r": a.lora_r, "lora_alpha": a.lora_alpha, "lora_dropout": a.lora_dropout,
                  "warmup_ratio": a.warmup_ratio, "max_length": a.max_length}
        datasets = [d for d in self.eval_datasets if d != UNSEEN]
        units = [Unit("base", None, {}, datasets, "main", "Base (SFT from scratch)")]
        for label, extra in a.methods.items():
            extra = dict(extra)
            method = extra.pop("method")
            for seed in seeds:
                units.append(Unit(f"{label}-s{seed}", method, {**common, **extra, "seed": seed}, datasets, "main",
                                  METHOD_LABELS[label], seed))
        sa = dict(a.methods.get("safe-align", {"method": "safe-align"}))
        sa.pop("method")
        sweep_sets = [d for d in sw.datasets if d in self.available_datasets]
        by_key = {u.train_key(): u for u in units}
        for norm in sw.normalisers:
            for alpha in sw.alphas:
                for seed in sw.seeds:
                    u = Unit(f"sweep-{norm}-a{alpha:g}-s{seed}", "safe-align",
                             {**common, **sa, "alpha": alpha, "normaliser": norm, "seed": seed}, sweep_sets, "sweep",
                             "Safe-Align", seed)
                    same = by_key.get(u.train_key())
                    if same is not None:  # the main Safe-Align run already is this sweep point
                        same.role = "main+sweep"
                        same.datasets += [d for d in sweep_sets if d not in same.datasets]
                        continue
                    units.append(u)
                    by_key[u.train_key()] = u
        return units

    def stage_units(self, seeds: Sequence[int]) -> List[Dict[str, Any]]:
        units = self.units(seeds)
        ev = self.s.eval
        ctx = {"work": str(self.work), "base_dir": str(self.work / "base"), "pairs": str(self.work / "data" / "pairs.jsonl"),
               "base_key": self.info["base"]["key"], "code": self.code, "keep_models": self.s.keep_models,
               "device": self.s.device, "samples_dir": str(self.out / SAMPLES),
               "eval": {"limit": ev.limit, "max_new_tokens": ev.max_new_tokens, "batch_size": ev.batch_size,
                        "workers": ev.workers, "samples": dict(ev.samples),
                        # only when set, so that the caches of studies without it keep their keys
                        **({"grammar": ev.grammar} if ev.grammar else {})}}
        for u in units:  # every training config is checked before the first run starts
            if u.method is not None:
                from safebeal.align.config import build_config

                build_config(u.method, overrides={**u.options, "model": "m", "data": "d", "out": "o"})
        results: List[Dict[str, Any]] = []
        log(f"{len(units)} units ({sum(1 for u in units if u.method)} training runs), jobs={self.s.jobs}")
        if self.s.jobs > 1:
            import multiprocessing

            with ProcessPoolExecutor(self.s.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                for u, r in zip(units, pool.map(_pool_run, [(u, ctx) for u in units])):
                    results.append(r)
                    self._unit_log(u, r)
        else:
            for u in units:
                r = run_unit(u, ctx)
                results.append(r)
                self._unit_log(u, r)
        return results

    def _unit_log(self, u: Unit, r: Dict[str, Any]) -> None:
        parts = []
        for ds, row in r["eval"].items():
            parts.append(f"{ds}: SafeR {_f(row['safe_rate'])} SuccR {_f(row['success_rate'])}")
        t = r.get("seconds", {})
        log(f"unit {u.name}{' (cached)' if r.get('cached') else ''}: train {t.get('train', 0):.0f} s, "
            f"eval {t.get('eval', 0):.0f} s; " + "; ".join(parts))

    # -- all ---------------------------------------------------------------------------------------------------
    @property
    def available_datasets(self) -> List[str]:
        names = set(self.s.eval.datasets) | set(self.s.sweep.datasets)
        if not self.info.get("saferisks", {}).get("available"):
            names = {n for n in names if not n.startswith("saferisks")}
        return sorted(names)

    @property
    def eval_datasets(self) -> List[str]:
        """The eval sets of Table 1 (with the derived virtualhome-unseen subset after virtualhome)."""
        out = []
        for d in self.s.eval.datasets:
            if d in self.available_datasets:
                out.append(d)
                if d == "virtualhome":
                    out.append(UNSEEN)
        return out

    def run(self, seeds: Sequence[int]) -> Dict[str, Any]:
        from . import report

        t0 = time.perf_counter()
        _quiet()
        self.out.mkdir(parents=True, exist_ok=True)
        self._stage("data", self.stage_data)
        self._stage("model", self.stage_model)
        self._stage("base", self.stage_base)
        results = self._stage("units", self.stage_units, seeds)
        self.timings["total_before_report"] = round(time.perf_counter() - t0, 2)
        doc = self._stage("report", report.write_all, self, results, seeds)
        self.timings["total"] = round(time.perf_counter() - t0, 2)
        report.write_timings(self, results)
        return doc

    def report_only(self, seeds: Sequence[int], from_samples: bool = False) -> Dict[str, Any]:
        """Rewrite the tables, plots and summary from ``results.json`` (no training, no evaluation); the wall
        time shown stays the one in ``timings.json`` (the run that computed the results). ``from_samples``: every
        unit's evaluation rows are first recomputed from its kept per-episode samples (``<out>/samples/``), and
        each value that differs from ``results.json`` is logged (``self.sample_mismatches``)."""
        from . import report

        try:
            saved = json.loads((self.out / "results.json").read_text())
            self.timings = json.loads((self.out / "timings.json").read_text())["stages"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError) as exc:
            raise SafebealError(f"{self.out}: no complete results to report on ({exc}); run the study first") from None
        self.info = saved["info"]
        if from_samples:
            self.sample_mismatches = self._recompute_from_samples(saved["units"])
        doc = report.write_all(self, saved["units"], seeds)
        report.fill_wall_time(self)
        return doc


    def _recompute_from_samples(self, units: List[Dict[str, Any]]) -> List[str]:
        """Replace each unit's evaluation rows by those recomputed from its kept samples; returns one line per
        value that differs from what the run recorded (none when the samples are the run's)."""
        diffs: List[str] = []
        rows = 0
        for r in units:
            name = r["unit"]["name"]
            d = self.out / SAMPLES / name
            if not d.is_dir():
                raise SafebealError(f"{d}: no kept samples for unit {name!r}; rerun the study to keep them")
            again = eval_from_samples(d)
            for ds, row in r["eval"].items():
                if ds not in again:
                    raise SafebealError(f"{d}: no samples for dataset {ds!r} of unit {name!r}")
                for k, v in again[ds].items():
                    if json.loads(json.dumps(v)) != row.get(k):
                        diffs.append(f"{name} {ds} {k}: recorded {row.get(k)!r}, from samples {v!r}")
                row.update(json.loads(json.dumps(again[ds])))
                rows += 1
        log(f"recomputed {rows} evaluation rows of {len(units)} units from {self.out / SAMPLES}: "
            + ("every value equal to results.json" if not diffs else f"{len(diffs)} values differ"))
        for line in diffs[:20]:
            log("  " + line)
        return diffs


def _f(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"
