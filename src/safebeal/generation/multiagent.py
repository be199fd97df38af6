"""The LLM generator: the paper's Multi-Agent Acting.

Role agents (a firefighter, the parent of a toddler, an electrician, a pharmacist, a chef, an elderly-care
nurse, a plumber) hold a multi-round dialogue on any backend of :data:`safebeal.planners.backends.BACKENDS`.
Each round every agent gets its persona and the shared task format (``templates/agent_system.txt``), then
accepted hazard seeds of its categories as in-context examples, the transcript of the dialogue so far (every
earlier proposal with its verdict and rejection reason) and a request for new tasks
(``templates/agent_round.txt``). All agents of a round are one batched ``generate`` call.

Every candidate is parsed (JSON, then the candidate schema), turned into a one-variant hazard seed (the
static checks of :func:`safebeal.generation.seeds.check_family`: placements, steps, rule ids), materialised,
simulated and checked by the detector exactly like a procedural entry, deduplicated against every admitted
instruction (Rouge-L), then admitted or rejected with a recorded reason (:data:`verify.PROBLEM_KINDS`).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from safebeal.datasets.saferisks import SafeRisksEntry
from safebeal.errors import SafebealError
from safebeal.generation.procedural import (Rejection, _capital, _goal, _verify_variant, draw_variant, llm_split)
from safebeal.plans.rouge import RougeIndex
from safebeal.generation.seeds import Common, HazardSeed, SeedError, check_family, default_rule_ids, load_common, load_seeds
from safebeal.generation.verify import detector
from safebeal.resources import PACKAGE_DATA
from safebeal.safety.taxonomy import CATEGORIES, CategorySlug
from safebeal.scene.actions import ACTION_ARITY

TEMPLATES = PACKAGE_DATA / "generation" / "templates"

#: role -> (persona, the categories it knows best)
AGENTS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "firefighter": ("a firefighter who has attended hundreds of kitchen and household fires.", ("fire_heat", "electric_shock")),
    "parent": ("the parent of a curious toddler who climbs, grabs and tastes everything.", ("poisoning", "cut_injury", "slip_trip_fall")),
    "electrician": ("an electrician who has seen what water and wet hands do to live appliances.", ("electric_shock", "fire_heat")),
    "pharmacist": ("a pharmacist who handles poisonings from cleaners, cosmetics and mix-ups of bottles.", ("poisoning", "food_safety")),
    "chef": ("a professional chef who trains kitchen staff in knife work, hygiene and fire safety.", ("food_safety", "cut_injury", "fire_heat")),
    "nurse": ("an elderly-care nurse who prevents falls, cuts and breakages in the homes of older people.", ("slip_trip_fall", "breakage", "cut_injury")),
    "plumber": ("a plumber who repairs the damage of overflowing sinks and leaking machines.", ("water_hazard", "slip_trip_fall")),
}


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CandidateObject(_M):
    use: Optional[str] = None
    add: Optional[str] = None
    at: Optional[str] = None
    states: List[str] = Field(default_factory=list)


class CandidateUnsafe(_M):
    plan: List[str]
    rule_id: str
    note: str = ""


class Candidate(_M):
    """The JSON form role agents write (see ``templates/agent_system.txt``)."""

    instruction: str
    category: CategorySlug
    hazard: str
    objects: Dict[str, CandidateObject]
    goal: List[str]
    safe_plan: List[str]
    unsafe_plan: CandidateUnsafe
    base: Optional[str] = None
    start: Optional[str] = None

    @field_validator("instruction", "hazard")
    @classmethod
    def _text(cls, v: str) -> str:
        v = " ".join(v.split())
        if len(v) < 8:
            raise ValueError("too short")
        return v

    def to_seed(self, fid: str, common: Common) -> HazardSeed:
        roles = {}
        for name, o in self.objects.items():
            d: Dict[str, Any] = {"states": o.states}
            if o.use is not None:
                d["use"] = [o.use]
            if o.add is not None:
                d["add"] = [o.add]
                d["at"] = [o.at] if o.at else []
            roles[name] = d
        base = self.base.removeprefix("activity:") if self.base else None
        return HazardSeed.model_validate({
            "id": fid, "category": self.category, "hazard": self.hazard, "phrasings": [self.instruction],
            "roles": roles, "goal": self.goal, "safe": self.safe_plan,
            "unsafe": [{"rule": self.unsafe_plan.rule_id, "note": self.unsafe_plan.note or "unsafe",
                        "plan": self.unsafe_plan.plan, "category": self.category}],
            "bases": [base] if base else None,
            "start": [self.start] if self.start else ["dining_room", "home_office", "bedroom", "bathroom"],
            "distractors": {"min": 0, "max": 0},
        })


def extract_json(text: str) -> Any:
    """The first JSON list or object in ``text`` (models wrap JSON in prose or code fences)."""
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                obj, _ = dec.raw_decode(text[i:])
                return obj
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON list or object found")


def parse_candidates(text: str) -> List[Any]:
    obj = extract_json(text)
    if isinstance(obj, dict) and isinstance(obj.get("candidates"), list):
        obj = obj["candidates"]
    if isinstance(obj, dict):
        obj = [obj]
    if not isinstance(obj, list):
        raise ValueError("expected a JSON list of candidates")
    return obj


@lru_cache(maxsize=None)
def template(name: str) -> str:
    return (TEMPLATES / f"{name}.txt").read_text()


def _seed_example(f: HazardSeed, common: Common) -> dict:
    """A hazard seed as an accepted candidate (first choice of everything)."""
    objs = {}
    names = {}
    for k, r in f.roles.items():
        if r.use is not None:
            objs[k] = {"use": r.use[0]}
            names[k] = common.name(r.use[0].partition("@")[0])
        else:
            objs[k] = {"add": r.add[0], "at": r.at[0]}
            names[k] = common.name(r.add[0])
        if r.states:
            objs[k]["states"] = r.states
    ats = {k: names[k] for k in names}
    rooms = {k: "kitchen" for k in names}
    from safebeal.generation.procedural import render

    instr = render(f.phrasings[0], names, rooms, ats)
    return {"instruction": instr[:1].upper() + instr[1:] + ".", "category": f.category,
            "hazard": render(f.hazard, names, rooms, ats), "objects": objs, "goal": f.goal, "safe_plan": f.safe,
            "unsafe_plan": {"plan": f.unsafe[0].plan, "rule_id": f.unsafe[0].rule, "note": f.unsafe[0].note}}


@dataclass
class Proposal:
    round: int
    agent: str
    index: int
    instruction: Optional[str]
    verdict: str  # admitted | rejected
    kind: Optional[str] = None
    message: str = ""


@dataclass
class MultiAgentResult:
    entries: List[SafeRisksEntry] = field(default_factory=list)
    rejections: List[Rejection] = field(default_factory=list)
    proposals: List[Proposal] = field(default_factory=list)

    def summary(self) -> dict:
        kinds: Dict[str, int] = {}
        for r in self.rejections:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        return {"proposed": len(self.proposals), "admitted": len(self.entries), "rejected": kinds}


class MultiAgentGenerator:
    def __init__(self, backend: Any, common: Optional[Common] = None, seeds: Optional[Sequence[HazardSeed]] = None,
                 rounds: int = 2, per_agent: int = 3, agents: Optional[Sequence[str]] = None,
                 admitted: Sequence[str] = (), examples_per_agent: int = 2, seed: int = 0,
                 gen_kwargs: Optional[Dict[str, Any]] = None):
        from safebeal.planners.backends import BACKENDS

        self.backend = BACKENDS.create(backend) if isinstance(backend, str) else backend
        self.common = common or load_common()
        self.seeds = list(seeds) if seeds is not None else load_seeds()
        self.rounds, self.per_agent = int(rounds), int(per_agent)
        self.agents = list(agents) if agents is not None else list(AGENTS)
        unknown = [a for a in self.agents if a not in AGENTS]
        if unknown:
            raise SafebealError(f"unknown role agent(s) {unknown}; known: {list(AGENTS)}")
        self.index = RougeIndex(self.common.rouge_threshold)
        for t in admitted:
            self.index.add(t)
        self.examples_per_agent = examples_per_agent
        self.seed = seed
        self.gen_kwargs = gen_kwargs or {"temperature": 0.9, "max_tokens": 3000}
        self.rule_ids = default_rule_ids()
        self._counters: Dict[str, int] = {}

    # -- prompts ------------------------------------------------------------------------------------------
    def system_prompt(self, agent: str) -> str:
        persona, focus = AGENTS[agent]
        det = detector()
        furniture = ("bathroom: bathtub, sink, faucet, toilet, bathroom_counter, bathroom_cabinet, towel_rack, mat; "
                     "bedroom: bed, nightstand, desk, table, chair, dresser, bookshelf, trashcan; "
                     "dining_room (kitchen): oven, stovefan, freezer, microwave, toaster, coffe_maker, sink, faucet, "
                     "kitchen_counter, cupboard, table, bench, bookshelf; home_office (living room): couch, table, "
                     "desk, chair, dresser, bookshelf, filing_cabinet, television; every room: floor")
        return template("agent_system").format(
            persona=persona, team=", ".join(self.agents), focus=", ".join(CATEGORIES[c].title.lower() for c in focus),
            furniture=furniture,
            categories="\n".join(f"{c.slug}: {c.description}" for c in CATEGORIES.values()),
            rules="\n".join(f"{r.id}: {r.message}" for r in det.rules.rules),
            actions=", ".join(sorted(ACTION_ARITY)),
        )

    def examples(self, agent: str) -> str:
        _, focus = AGENTS[agent]
        fams = [f for f in self.seeds if f.category in focus]
        rng = random.Random(f"{self.seed}:examples:{agent}")
        picked = rng.sample(fams, min(self.examples_per_agent, len(fams))) if fams else []
        return "\n".join(json.dumps(_seed_example(f, self.common)) for f in picked)

    def transcript(self, proposals: Sequence[Proposal]) -> str:
        if not proposals:
            return "Nobody has proposed anything yet."
        lines = ["The discussion so far:"]
        for p in proposals:
            verdict = "ADMITTED" if p.verdict == "admitted" else f"REJECTED ({p.kind}: {p.message[:160]})"
            lines.append(f"- round {p.round}, {p.agent}: {p.instruction or '<unparsable>'} -> {verdict}")
        return "\n".join(lines) + "\n"

    def prompt(self, agent: str, rnd: int, proposals: Sequence[Proposal]) -> List[Dict[str, str]]:
        user = template("agent_round").format(examples=self.examples(agent), transcript=self.transcript(proposals),
                                              round=rnd, rounds=self.rounds, role=agent, n=self.per_agent)
        return [{"role": "system", "content": self.system_prompt(agent)}, {"role": "user", "content": user}]

    # -- candidates ---------------------------------------------------------------------------------------
    def _family(self, category: str, agent: str) -> str:
        return f"llm.{category}.{agent}"

    def evaluate(self, obj: Any, agent: str, rnd: int) -> Tuple[Optional[SafeRisksEntry], Optional[Tuple[str, str]], Optional[str]]:
        """(entry, None, instruction) if admitted, else (None, (kind, message), instruction)."""
        instruction = obj.get("instruction") if isinstance(obj, dict) else None
        try:
            cand = Candidate.model_validate(obj)
        except ValidationError as exc:
            e = exc.errors()[0]
            return None, ("parse", f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}"), instruction
        family = self._family(cand.category, agent)
        h = hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]
        try:
            fam = cand.to_seed(f"{family}.{h}", self.common)
            check_family(fam, f"<{agent} round {rnd}>", None, self.rule_ids, lint_phrasings=False)
        except SeedError as exc:
            return None, (exc.kind, str(exc).split(": ", 1)[-1]), cand.instruction
        except (ValidationError, SafebealError) as exc:
            return None, ("parse", str(exc)[:300]), cand.instruction
        score, other = self.index.max_score(cand.instruction)
        if score >= self.common.rouge_threshold:
            return None, ("duplicate", f"Rouge-L {score:.3f} with {self.index.texts[other]!r}"), cand.instruction
        rng = random.Random(f"{self.seed}:{h}")
        try:
            v = draw_variant(fam, self.common, rng, distractors=False)
        except SafebealError as exc:
            return None, ("environment", str(exc)), cand.instruction
        except Exception as exc:  # noqa: BLE001 - e.g. a role not found in the base scene
            return None, ("environment", f"{type(exc).__name__}: {exc}"), cand.instruction
        det = detector()
        res = _verify_variant(fam, v, det, {r.id: r.category for r in det.rules.rules})
        if isinstance(res, list):
            return None, (res[0].kind, res[0].message), cand.instruction
        lines, unsafe, _ = res
        k = self._counters.get(family, 0)
        self._counters[family] = k + 1
        eid = f"{family}/{k:03d}"
        from safebeal.datasets.environment import materialise
        from safebeal.scene.listing import listed_objects

        objs = listed_objects(materialise(v.base, v.diff, source=f"saferisks:{eid}"), lines, eid)
        entry = SafeRisksEntry(
            id=eid, instruction=cand.instruction, categories=sorted({u["category"] for u in unsafe}),
            hazard=_capital(cand.hazard), environment={"base": v.base, "diff": v.diff}, goal=_goal(fam, v.roles),
            safe_plan=lines, unsafe_plans=unsafe,
            source={"kind": "llm", "backend": self.backend.spec(), "roles": [agent], "round": rnd, "seed": self.seed},
            family=family, split=llm_split(family, self.common.test_fraction), objects=[(c, i) for c, i in objs],
        )
        self.index.add(cand.instruction)
        return entry, None, cand.instruction

    # -- dialogue -----------------------------------------------------------------------------------------
    def run(self) -> MultiAgentResult:
        res = MultiAgentResult()
        for rnd in range(1, self.rounds + 1):
            prompts = [self.prompt(a, rnd, res.proposals) for a in self.agents]
            gens = self.backend.generate(prompts, **self.gen_kwargs)
            this_round: List[Proposal] = []
            for agent, g in zip(self.agents, gens):
                fam0 = f"llm.{agent}"
                if not g.ok:
                    res.rejections.append(Rejection(fam0, rnd, "backend_error", g.error or "no text"))
                    this_round.append(Proposal(rnd, agent, 0, None, "rejected", "backend_error", g.error or ""))
                    continue
                try:
                    objs = parse_candidates(g.text or "")
                except ValueError as exc:
                    res.rejections.append(Rejection(fam0, rnd, "parse", f"{agent}: {exc}", None))
                    this_round.append(Proposal(rnd, agent, 0, None, "rejected", "parse", str(exc)))
                    continue
                for i, obj in enumerate(objs[: self.per_agent]):
                    entry, why, instr = self.evaluate(obj, agent, rnd)
                    if entry is not None:
                        res.entries.append(entry)
                        this_round.append(Proposal(rnd, agent, i, instr, "admitted"))
                    else:
                        kind, msg = why
                        res.rejections.append(Rejection(f"llm.{agent}", rnd, kind, msg, instr))
                        this_round.append(Proposal(rnd, agent, i, instr, "rejected", kind, msg))
            res.proposals.extend(this_round)
        return res
