"""The household hazard catalogue (``data/catalogue.yaml``): every hazard SafePlan-Bench knows of, its category,
kinds and public source, and where it lives: the rules that detect it, a gap saying why none does yet, or the
reason this simulator cannot express it. Validated on load, errors naming file, line and entry.

    from safebeal.safety.catalogue import load_catalogue
    cat = load_catalogue()                     # against the shipped rules
    cat.coverage()                             # {"hazards": 123, "representable": 54, "with_rules": 48, ...}
    print(cat.markdown())                      # the table in docs/hazards.md
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.resources import PACKAGE_DATA
from safebeal.safety.taxonomy import KINDS, SLUGS
from safebeal.safety.yamlio import YamlError, line_of, load_yaml_with_lines

CATALOGUE_FILE = PACKAGE_DATA / "safety" / "data" / "catalogue.yaml"
ENTRY_KEYS = {"id", "category", "kinds", "source", "description", "rules", "gap", "representable", "reason"}


@dataclass(frozen=True)
class Hazard:
    id: str
    category: str
    kinds: Tuple[str, ...]
    source: str
    description: str
    representable: bool
    rules: Tuple[str, ...] = ()
    gap: str = ""  # representable, no rule yet: why
    reason: str = ""  # not representable: why

    @property
    def where(self) -> str:
        if not self.representable:
            return f"not representable: {self.reason}"
        return ", ".join(f"`{r}`" for r in self.rules) if self.rules else f"no rule yet: {self.gap}"


@dataclass(frozen=True)
class Catalogue:
    hazards: Tuple[Hazard, ...]
    source: str

    def by_id(self, hid: str) -> Hazard:
        return next(h for h in self.hazards if h.id == hid)

    def coverage(self) -> Dict[str, int]:
        rep = [h for h in self.hazards if h.representable]
        return {"hazards": len(self.hazards), "representable": len(rep), "with_rules": sum(1 for h in rep if h.rules),
                "gaps": sum(1 for h in rep if not h.rules), "not_representable": len(self.hazards) - len(rep)}

    def markdown(self) -> str:
        rows = ["| hazard | category | kinds | source | where it lives |", "|---|---|---|---|---|"]
        for h in self.hazards:
            rows.append(f"| `{h.id}`: {h.description} | {h.category} | {', '.join(h.kinds)} | {h.source} | {h.where} |")
        return "\n".join(rows) + "\n"


def _text(e: dict, key: str, src: str, where: Optional[int], hid: Optional[str]) -> str:
    v = e.get(key)
    if not isinstance(v, str) or not v.strip():
        raise YamlError(src, where, f"'{key}' must be non-empty text", hid)
    return v.strip()


def load_catalogue(path: Path | str | None = None, rule_ids: Optional[Sequence[str]] = None) -> Catalogue:
    """Read and validate a catalogue; ``rule_ids`` (default: the shipped rules) are the ids ``rules`` may name."""
    p = Path(path) if path is not None else CATALOGUE_FILE
    src = str(p)
    raw = load_yaml_with_lines(p)
    if not isinstance(raw, dict) or not isinstance(raw.get("hazards"), list):
        raise YamlError(src, line_of(raw), "expected a mapping with a 'hazards' list")
    if rule_ids is None:
        from safebeal.safety.rules import load_rules

        rule_ids = [r.id for r in load_rules(entry_points_too=False).rules]
    known = set(rule_ids)
    out: List[Hazard] = []
    seen: Dict[str, Optional[int]] = {}
    for e in raw["hazards"]:
        where = line_of(e)
        if not isinstance(e, dict):
            raise YamlError(src, where, "each hazard must be a mapping")
        hid = e.get("id")
        if not isinstance(hid, str) or not hid.strip() or any(c.isspace() for c in hid):
            raise YamlError(src, where, f"hazard id must be a name without spaces, got {hid!r}")
        unknown = set(e) - ENTRY_KEYS - {"__line__"}
        if unknown:
            raise YamlError(src, where, f"unknown key(s) {sorted(unknown)}; allowed: {sorted(ENTRY_KEYS)}", hid)
        if hid in seen:
            raise YamlError(src, where, f"duplicate hazard id (first at line {seen[hid]})", hid)
        seen[hid] = where
        if e.get("category") not in SLUGS:
            raise YamlError(src, where, f"unknown category {e.get('category')!r}; known: {list(SLUGS)}", hid)
        kinds = e.get("kinds")
        if not isinstance(kinds, list) or not kinds or any(k not in KINDS for k in kinds):
            raise YamlError(src, where, f"'kinds' must be a non-empty list of {list(KINDS)}, got {kinds!r}", hid)
        representable = e.get("representable", True)
        if not isinstance(representable, bool):
            raise YamlError(src, where, f"'representable' must be true or false, got {representable!r}", hid)
        rules: Tuple[str, ...] = ()
        gap = reason = ""
        if representable:
            if "reason" in e:
                raise YamlError(src, where, "'reason' is for hazards that are not representable", hid)
            rl = e.get("rules")
            if not isinstance(rl, list) or not all(isinstance(r, str) for r in rl):
                raise YamlError(src, where, "a representable hazard needs 'rules': a list of rule ids (may be empty)", hid)
            bad = [r for r in rl if r not in known]
            if bad:
                raise YamlError(src, where, f"unknown rule id(s) {bad}", hid)
            rules = tuple(rl)
            if not rules:
                gap = _text(e, "gap", src, where, hid)
            elif "gap" in e:
                raise YamlError(src, where, "'gap' is for hazards with no rule", hid)
        else:
            if "rules" in e or "gap" in e:
                raise YamlError(src, where, "a hazard that is not representable has no 'rules' or 'gap'", hid)
            reason = _text(e, "reason", src, where, hid)
        out.append(Hazard(hid, e["category"], tuple(kinds), _text(e, "source", src, where, hid),
                          _text(e, "description", src, where, hid), representable, rules, gap, reason))
    return Catalogue(tuple(out), src)
