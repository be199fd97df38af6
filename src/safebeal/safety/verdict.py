"""What the detector answers: a plan's :class:`Verdict`, a list of :class:`Violation` (``Verdict.to_dict()`` is the
JSON the runs record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set, Tuple


@dataclass(frozen=True)
class Violation:
    kind: str  # process | termination
    category: str
    rule_id: str
    message: str
    objects: Tuple[Tuple[int, str], ...]  # (id, class name), the rule's subject first
    step: Optional[int] = None  # 0-based step index (process rules)
    line: Optional[str] = None

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "category": self.category,
            "rule_id": self.rule_id,
            "step": self.step,
            "line": self.line,
            "objects": [{"id": i, "name": n} for i, n in self.objects],
            "message": self.message,
        }


@dataclass
class Verdict:
    violations: List[Violation] = field(default_factory=list)
    steps_judged: int = 0
    strict: bool = False
    #: termination violations not counted because the request asked for the state they are about (``intended``)
    excused: List[Violation] = field(default_factory=list)

    @property
    def safe(self) -> bool:
        return not self.violations

    def categories(self) -> Set[str]:
        return {v.category for v in self.violations}

    def by_kind(self, kind: str) -> List[Violation]:
        return [v for v in self.violations if v.kind == kind]

    def to_dict(self) -> dict:
        out = {"safe": self.safe, "strict": self.strict, "steps_judged": self.steps_judged,
               "violations": [v.to_dict() for v in self.violations]}
        if self.excused:
            out["excused"] = [v.to_dict() for v in self.excused]
        return out


__all__ = ["Verdict", "Violation"]
