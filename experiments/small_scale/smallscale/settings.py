"""The study's settings: one YAML file per scale (``configs/full.yaml``, ``configs/smoke.yaml``), validated on load.

Unknown keys and wrong types are errors naming the file and line. Method options under ``align.methods`` are
``safebeal train`` options and are checked by ``safebeal.align.config.build_config`` when the study starts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from safebeal.errors import SafebealError
from safebeal.safety.yamlio import LINE_KEY, load_yaml_with_lines, strip_lines

HERE = Path(__file__).resolve().parent.parent
CONFIGS = HERE / "configs"

#: method label (as in the paper's Table 1) -> safebeal train method
METHOD_LABELS = {"lora-sft": "Lora", "dpo": "DPO", "simpo": "SimPO", "safe-align": "Safe-Align"}
#: eval dataset -> short name used in tables
DATASET_LABELS = {"activity-test": "ActivityPrograms test", "virtualhome": "VirtualHome",
                  "saferisks-test": "SafeRisks test", "saferisks-id": "SafeRisks in distribution",
                  "virtualhome-unseen": "VirtualHome, programs not in the training split"}


class SettingsError(SafebealError):
    pass


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataSettings(_M):
    sft_limit: int = Field(0, ge=0, description="ActivityPrograms training programs for the base SFT (0: all)")
    pair_limit: int = Field(0, ge=0, description="safe plans per origin for the preference pairs (0: all)")
    pair_seed: int = 0
    per_operator: int = Field(1, ge=1)
    max_tries: int = Field(4, ge=1)
    workers: int = Field(1, ge=1)
    use_saferisks: bool = True
    saferisks_limit: int = Field(0, ge=0, description="SafeRisks training entries in the base SFT data (0: all)")
    saferisks_pairs: int = Field(0, ge=0, description="seeded sample of SafeRisks training entries the pairs are "
                                                      "built from (0: all)")
    activity: bool = Field(True, description="ActivityPrograms training programs in the base SFT data")
    unsafe_share: float = Field(0.0, ge=0, le=1, description="share of the SafeRisks training entries whose first "
                                "unsafe plan is also a base-SFT example (study v2 B: the base writes hazards at a "
                                "measurable rate)")
    id_holdout: bool = Field(False, description="leave the training entries set in the in-distribution test's homes "
                             "(saferisks-id) out of the base SFT data and the pairs (study C)")
    pair_sources: List[str] = Field(default_factory=lambda: ["mutation", "saferisks"],
                                    description="pair builder sources (safebeal.align.pairs.SOURCES)")


class TokenizerSettings(_M):
    vocab_size: int = Field(2048, ge=300)


class ModelSettings(_M):
    hidden_size: int = Field(256, ge=8)
    intermediate_size: int = Field(688, ge=8)
    num_hidden_layers: int = Field(4, ge=1)
    num_attention_heads: int = Field(4, ge=1)
    num_key_value_heads: int = Field(4, ge=1)
    max_position_embeddings: int = Field(512, ge=32)
    tie_word_embeddings: bool = True


class BaseTrainSettings(_M):
    epochs: float = Field(10.0, gt=0)
    max_steps: int = -1
    lr: float = Field(1e-3, gt=0)
    batch_size: int = Field(16, ge=1)
    warmup_ratio: float = Field(0.05, ge=0, lt=1)
    weight_decay: float = Field(0.01, ge=0)
    max_length: int = Field(384, ge=16)
    seed: int = 0
    threads: int = Field(1, ge=1, description="torch threads for the base SFT (nothing else runs meanwhile)")


class AlignSettings(_M):
    max_steps: int = Field(100, ge=1)
    batch_size: int = Field(8, ge=1)
    lr: float = Field(5e-4, gt=0)
    lora_r: int = Field(16, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lora_dropout: float = Field(0.0, ge=0, lt=1)
    warmup_ratio: float = Field(0.0, ge=0, lt=1)
    max_length: int = Field(384, ge=16)
    pair_limit: int = Field(0, ge=0, description="train on the first N pairs after a seeded shuffle (0: all)")
    methods: Dict[str, Dict[str, Any]] = Field(default_factory=lambda: {
        "lora-sft": {"method": "sft"}, "dpo": {"method": "dpo"}, "simpo": {"method": "simpo"},
        "safe-align": {"method": "safe-align"}})

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
        for label, opts in v.items():
            if label not in METHOD_LABELS:
                raise ValueError(f"unknown method label {label!r}; known: {', '.join(METHOD_LABELS)}")
            if not isinstance(opts, dict) or "method" not in opts:
                raise ValueError(f"{label}: give at least 'method: <sft|dpo|simpo|safe-align>'")
        return v


class EvalSettings(_M):
    datasets: List[str] = Field(default_factory=lambda: ["activity-test", "virtualhome", "saferisks-test"])
    limit: int = Field(0, ge=0, description="first N tasks of each eval set (0: all)")
    samples: Dict[str, int] = Field(default_factory=dict,
                                    description="eval set -> size of a seeded random sample of it (instead of all)")
    max_new_tokens: int = Field(160, ge=1)
    batch_size: int = Field(16, ge=1)
    workers: int = Field(1, ge=1)
    grammar: Optional[str] = Field(None, description="constrained decoding (hf backend's grammar=, e.g. 'actions')")


class SweepSettings(_M):
    alphas: List[float] = Field(default_factory=lambda: [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    normalisers: List[str] = Field(default_factory=lambda: ["length", "weighted"])
    seeds: List[int] = Field(default_factory=lambda: [0])
    datasets: List[str] = Field(default_factory=lambda: ["activity-test", "saferisks-test"])

    @field_validator("alphas")
    @classmethod
    def _alphas(cls, v: List[float]) -> List[float]:
        if any(not 0 <= a <= 1 for a in v):
            raise ValueError(f"alphas must be in [0, 1], got {v}")
        return v

    @field_validator("normalisers")
    @classmethod
    def _norms(cls, v: List[str]) -> List[str]:
        bad = [n for n in v if n not in ("length", "weighted")]
        if bad:
            raise ValueError(f"unknown normaliser(s) {bad}; known: length, weighted")
        return v


class StudySettings(_M):
    name: str
    description: str = ""
    seeds: List[int] = Field(default_factory=lambda: [0, 1, 2])
    jobs: int = Field(1, ge=1, description="training+evaluation units run in parallel processes")
    keep_models: bool = Field(False, description="keep the aligned models' weights after evaluation")
    device: str = Field("cpu", pattern="^(auto|cpu|cuda)$",
                        description="where models train and generate: cpu (the budgeted setting), cuda or auto")
    data: DataSettings = Field(default_factory=DataSettings)
    tokenizer: TokenizerSettings = Field(default_factory=TokenizerSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    base: BaseTrainSettings = Field(default_factory=BaseTrainSettings)
    align: AlignSettings = Field(default_factory=AlignSettings)
    eval: EvalSettings = Field(default_factory=EvalSettings)
    sweep: SweepSettings = Field(default_factory=SweepSettings)

    def digest(self, *parts: str) -> str:
        """A short hash of the named sections (all when none): a stage is redone when its inputs change."""
        data = self.model_dump()
        if parts:
            data = {p: data[p] for p in parts}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def _line(raw: Any, loc: tuple) -> Optional[int]:
    """The line of the deepest mapping on ``loc`` in the line-annotated YAML."""
    line = raw.get(LINE_KEY) if isinstance(raw, dict) else None
    node = raw
    for key in loc:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            break
        if isinstance(node, dict) and LINE_KEY in node:
            line = node[LINE_KEY]
    return line


def _key_line(path: str | Path, start: Optional[int], key: Any) -> Optional[int]:
    """The line of ``key:`` at or after line ``start`` (the mapping that holds it), else ``start``."""
    if start is None or not isinstance(key, str):
        return start
    import re

    lines = Path(path).read_text().splitlines()
    rx = re.compile(rf"^\s*(-\s*)?{re.escape(key)}\s*:")
    for i in range(start - 1, len(lines)):
        if rx.match(lines[i]):
            return i + 1
    return start


def load_settings(path: str | Path) -> StudySettings:
    raw = load_yaml_with_lines(path)
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: a study config must be a mapping")
    try:
        return StudySettings.model_validate(strip_lines(raw))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err.get("loc", ()))
        line = _key_line(path, _line(raw, loc), loc[-1] if loc else None)
        where = f"{path}:{line}" if line else str(path)
        raise SettingsError(f"{where}: {'.'.join(map(str, loc))}: {err.get('msg')}") from None
