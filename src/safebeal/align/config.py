"""Training configuration: one dataclass per method, loaded from YAML and overridden by CLI flags.

Every field carries its help text in ``metadata["help"]``; the ``safebeal train`` command turns the fields into
``--flags`` (``lora_r`` -> ``--lora-r``, booleans -> ``--lora/--no-lora``) and ``--config file.yaml`` reads the same
names (``lora_r`` or ``lora-r``). Precedence: dataclass default < YAML < CLI flag.

    >>> cfg = build_config("safe-align", overrides={"model": "m", "data": "d", "out": "o", "alpha": 0.2})
    >>> cfg.alpha, cfg.beta, cfg.gamma
    (0.2, 2.0, 0.5)

This module imports no torch, so the CLI can validate input before anything heavy is loaded.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type

import yaml

from safebeal.errors import SafebealError


class ConfigError(SafebealError):
    """A bad training configuration (unknown method or key, wrong type, out-of-range value)."""


def _f(default: Any, help: str, choices: Optional[Tuple[str, ...]] = None) -> Any:
    meta = {"help": help}
    if choices:
        meta["choices"] = choices
    return field(default=default, metadata=meta)


def _check_schedule(prefix: str, lr: float, max_steps: int, epochs: float) -> None:
    """One training stage's learning rate and length (``prefix``: "" for the run, "sft_" for the recipe's SFT stage)."""
    if lr <= 0:
        raise ConfigError(f"{prefix}lr must be > 0, got {lr}")
    if max_steps == 0 or max_steps < -1:
        raise ConfigError(f"{prefix}max_steps must be -1 (use {prefix}epochs) or >= 1, got {max_steps}")
    if max_steps == -1 and epochs <= 0:
        raise ConfigError(f"{prefix}epochs must be > 0 when {prefix}max_steps is -1")


@dataclass
class TrainConfig:
    """Fields shared by every method."""

    model: str = _f("", "Base model: a hub id (org/name) or a local directory.")
    data: str = _f("", "Pair dataset: a datasets.save_to_disk directory, a directory with pairs.jsonl, or a .jsonl file; "
                       "worldmodel:PATH for WorldModel's data (sft only: the world-model baseline).")
    out: str = _f("", "Output directory: the trained model (merged, loadable with hf:model=<out>), logs and config.")
    lora: bool = _f(True, "Train LoRA adapters (peft) instead of all weights.")
    lora_r: int = _f(16, "LoRA rank.")
    lora_alpha: int = _f(32, "LoRA scaling alpha (not Safe-Align's alpha).")
    lora_dropout: float = _f(0.05, "LoRA dropout.")
    lora_target_modules: str = _f("all-linear", "Modules LoRA adapts: 'all-linear' or a comma list such as q_proj,v_proj.")
    overwrite: bool = _f(False, "Replace a model or logs already in --out.")
    merge: bool = _f(True, "With LoRA: save the merged model in <out> (the adapter always goes to <out>/adapter).")
    lr: float = _f(5e-5, "Peak learning rate.")
    epochs: float = _f(1.0, "Training epochs (ignored when max_steps > 0).")
    max_steps: int = _f(-1, "Stop after this many optimizer steps (-1: use epochs).")
    batch_size: int = _f(4, "Pairs (or examples) per device per step.")
    grad_accum: int = _f(1, "Gradient accumulation steps.")
    warmup_ratio: float = _f(0.0, "Fraction of steps for linear warm-up.")
    weight_decay: float = _f(0.0, "AdamW weight decay.")
    seed: int = _f(0, "Random seed (data order, LoRA init).")
    max_length: int = _f(1024, "Max tokens of prompt + completion; longer completions are truncated.")
    limit: int = _f(0, "Use only the first N pairs (0: all).")
    logging_steps: int = _f(1, "Log every N optimizer steps.")
    save_steps: int = _f(0, "Save a checkpoint every N steps (0: only the final model).")
    device: str = _f("auto", "auto, cpu or cuda. auto picks cuda when available.", ("auto", "cpu", "cuda"))
    dtype: str = _f("auto", "Weights dtype: auto (bf16 on a bf16 GPU, else float32), float32, bfloat16, float16.",
                    ("auto", "float32", "bfloat16", "float16"))
    bf16: Optional[bool] = _f(None, "bf16 mixed precision (default: on with a bf16-capable GPU, always off on CPU).")
    gradient_checkpointing: Optional[bool] = _f(
        None, "Gradient checkpointing (default: on with a GPU, where an 8B model needs it to fit 24 GB; always off "
              "on CPU). --no-gradient-checkpointing trades memory for speed.")
    group_by_length: bool = _f(False, "Batch examples of similar length together (less padding when lengths vary "
                                      "widely; the batch order is then no longer uniformly random).")
    progress: bool = _f(True, "Show a progress bar.")
    trust_remote_code: bool = _f(False, "Allow model code from the model directory or hub.")

    method = "base"

    def validate(self) -> None:
        """Range checks (types are checked when values are set); raise ConfigError naming the field."""
        for name in ("model", "data", "out"):
            if not getattr(self, name):
                raise ConfigError(f"{self.method}: --{name} is required")
        positive = ["lora_r", "lora_alpha", "batch_size", "grad_accum", "max_length", "logging_steps"]
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("limit", "save_steps", "epochs", "weight_decay"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.lora_dropout < 1:
            raise ConfigError(f"lora_dropout must be in [0, 1), got {self.lora_dropout}")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        _check_schedule("", self.lr, self.max_steps, self.epochs)
        for f in dataclasses.fields(self):
            choices = f.metadata.get("choices")
            if choices and getattr(self, f.name) not in choices:
                raise ConfigError(f"{f.name} must be one of {', '.join(choices)}, got {getattr(self, f.name)!r}")

    def to_dict(self) -> Dict[str, Any]:
        return {"method": self.method, **dataclasses.asdict(self)}


@dataclass
class SFTTrainConfig(TrainConfig):
    """Supervised fine-tuning on the safe plans (``chosen``), loss on completion tokens only (TRL SFTTrainer)."""

    lr: float = _f(2e-4, "Peak learning rate.")
    method = "sft"


@dataclass
class DPOTrainConfig(TrainConfig):
    """Direct Preference Optimization (TRL DPOTrainer); the reference model is the base (adapters disabled with LoRA)."""

    beta: float = _f(0.1, "beta: the reward scale (for dpo, the strength of the pull towards the reference model).")
    method = "dpo"

    def validate(self) -> None:
        super().validate()
        if self.beta <= 0:
            raise ConfigError(f"beta must be > 0, got {self.beta}")


@dataclass
class SimPOTrainConfig(TrainConfig):
    """SimPO (TRL CPOTrainer, loss_type=simpo): reference-free, length-normalised reward with a target margin.

    beta=2.0 and gamma_beta_ratio=0.25 (gamma=0.5) are SimPO's published defaults; the SFT term is on (weight 1,
    SimPO publishes 0), because unanchored preference training collapsed in the project's ablation."""

    beta: float = _f(2.0, "Reward scale beta (SimPO default 2.0).")
    gamma_beta_ratio: float = _f(0.25, "Target margin gamma as a fraction of beta: gamma = gamma_beta_ratio * beta (SimPO default 0.25).")
    sft_weight: float = _f(1.0, "Weight of the NLL of the safe plan added to the loss (TRL's cpo_alpha). Default 1: "
                                "without it every preference method collapsed in docs/experiments.md; 0 is SimPO's "
                                "published form.")
    method = "simpo"

    @property
    def gamma(self) -> float:
        return self.gamma_beta_ratio * self.beta

    def validate(self) -> None:
        super().validate()
        if self.beta <= 0:
            raise ConfigError(f"beta must be > 0, got {self.beta}")
        if self.gamma_beta_ratio < 0:
            raise ConfigError(f"gamma_beta_ratio must be >= 0, got {self.gamma_beta_ratio}")
        if self.sft_weight < 0:
            raise ConfigError(f"sft_weight must be >= 0, got {self.sft_weight}")


@dataclass
class SafeAlignConfig(SimPOTrainConfig):
    """Safe-Align: SimPO whose reward down-weights the tokens of the k actions both plans share.

    r(x, y) = beta / N(y) * (alpha * sum_{prefix tokens} log p + sum_{rest incl. EOS} log p),
    N(y) = |y| (normaliser=length, the paper's form) or alpha * |prefix| + |rest| (normaliser=weighted).
    alpha=1 is exactly SimPO."""

    alpha: float = _f(0.5, "Weight of the shared-prefix tokens in the reward, in [0, 1]; 1 is SimPO.")
    normaliser: str = _f("weighted", "Reward denominator: weighted (sum of token weights: alpha changes the prefix's "
                                     "share of the reward) or length (|y| tokens, the paper: alpha then acts only "
                                     "through 1/|y_w| - 1/|y_l|, nothing on equal-length pairs).",
                         ("length", "weighted"))
    disable_dropout: bool = _f(True, "Turn model dropout off, as TRL's SimPO does.")
    method = "safe-align"

    def validate(self) -> None:
        super().validate()
        if not 0.0 <= self.alpha <= 1.0:
            raise ConfigError(f"alpha must be in [0, 1], got {self.alpha}")


# -- chained recipes: SFT, then a preference method from the SFT model (safebeal.align.recipe) ----------------
#: fields the SFT stage takes over from the chained config as they are (the rest: sft_* fields or SFT defaults)
SFT_SHARED = ("model", "lora", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules", "overwrite",
              "batch_size", "grad_accum", "warmup_ratio", "weight_decay", "seed", "max_length", "logging_steps",
              "save_steps", "device", "dtype", "bf16", "gradient_checkpointing", "group_by_length", "progress",
              "trust_remote_code")


@dataclass
class SFTStageFields:
    """The SFT stage of a chained method (``sft+dpo``, ``sft+simpo``, ``sft+safe-align``). Model, LoRA, batch
    and runtime options are shared with the preference stage; these set what differs."""

    sft_data: str = _f("dataset:activity-train", "SFT stage data, a comma list of sources: dataset:NAME (the "
                                                 "reference plans of a registered dataset, e.g. dataset:activity-train, "
                                                 "prompted as the benchmark prompts them), worldmodel:PATH, or a pair "
                                                 "dataset path (its chosen plans).")
    sft_limit: int = _f(0, "SFT stage: use only the first N examples of each source (0: all).")
    sft_lr: float = _f(2e-4, "SFT stage peak learning rate.")
    sft_epochs: float = _f(1.0, "SFT stage epochs (ignored when sft_max_steps > 0).")
    sft_max_steps: int = _f(-1, "SFT stage: stop after this many optimizer steps (-1: use sft_epochs).")
    sft_merge: bool = _f(True, "Merge the SFT adapter into the base: the preference stage then trains a fresh LoRA "
                               "on the SFT model, which is also DPO's reference. --no-sft-merge keeps the adapter and "
                               "the preference stage goes on training it (simpo, safe-align; needs --lora).")

    def validate_sft_stage(self) -> None:
        if not str(self.sft_data).strip():
            raise ConfigError(f"{self.method}: --sft-data is required")
        if self.sft_limit < 0:
            raise ConfigError(f"sft_limit must be >= 0, got {self.sft_limit}")
        _check_schedule("sft_", self.sft_lr, self.sft_max_steps, self.sft_epochs)
        if not self.sft_merge and not self.lora:
            raise ConfigError("--no-sft-merge keeps the SFT adapter: it needs --lora")
        if not self.sft_merge and self.method == "sft+dpo":
            raise ConfigError("sft+dpo needs the merged SFT model as its reference: drop --no-sft-merge")


def _chained(pref: Type[TrainConfig]) -> Type[TrainConfig]:
    """``sft+<method>``: the preference config's fields plus :class:`SFTStageFields`."""

    def validate(self: Any) -> None:
        pref.validate(self)
        self.validate_sft_stage()

    name = "SFTThen" + pref.__name__
    cls = dataclass(type(name, (pref, SFTStageFields), {
        "__doc__": f"SFT, then {pref.method} from the SFT model (safebeal.align.recipe).",
        "method": f"sft+{pref.method}", "preference_method": pref.method, "validate": validate,
        "__module__": __name__}))
    return cls


SFTThenDPOConfig = _chained(DPOTrainConfig)
SFTThenSimPOConfig = _chained(SimPOTrainConfig)
SFTThenSafeAlignConfig = _chained(SafeAlignConfig)

#: method name -> config class (the CLI's --method choices)
CONFIGS: Dict[str, Type[TrainConfig]] = {
    "sft": SFTTrainConfig,
    "dpo": DPOTrainConfig,
    "simpo": SimPOTrainConfig,
    "safe-align": SafeAlignConfig,
    "sft+dpo": SFTThenDPOConfig,
    "sft+simpo": SFTThenSimPOConfig,
    "sft+safe-align": SFTThenSafeAlignConfig,
}


def is_chained(method: str) -> bool:
    return "+" in method


def stage_configs(cfg: TrainConfig, sft_out: str) -> Tuple[TrainConfig, TrainConfig]:
    """(SFT stage config, preference stage config) of a chained config; the SFT stage writes to ``sft_out``, the
    preference stage to ``cfg.out`` and starts from ``sft_out`` when the SFT adapter is merged."""
    if not is_chained(cfg.method):
        raise ConfigError(f"{cfg.method} is not a chained method")
    sft = SFTTrainConfig(**{n: getattr(cfg, n) for n in SFT_SHARED}, data=cfg.sft_data, out=sft_out,
                         lr=cfg.sft_lr, epochs=cfg.sft_epochs, max_steps=cfg.sft_max_steps, limit=cfg.sft_limit,
                         merge=cfg.sft_merge)
    pref_cls = CONFIGS[cfg.preference_method]
    names = set(field_map(pref_cls))
    pref = pref_cls(**{n: getattr(cfg, n) for n in names})
    if cfg.sft_merge:
        pref.model = sft_out
    return sft, pref


def config_class(method: str) -> Type[TrainConfig]:
    try:
        return CONFIGS[method]
    except KeyError:
        raise ConfigError(f"unknown method {method!r}; choose one of {', '.join(CONFIGS)}") from None


def field_map(cls: Type[TrainConfig]) -> Dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


def all_fields() -> Dict[str, Tuple[dataclasses.Field, List[str]]]:
    """Every field of every method: name -> (field, methods that have it), in declaration order."""
    out: Dict[str, Tuple[dataclasses.Field, List[str]]] = {}
    for method, cls in CONFIGS.items():
        for f in dataclasses.fields(cls):
            if f.name in out:
                out[f.name][1].append(method)
            else:
                out[f.name] = (f, [method])
    return out


def field_type(cls: Type[TrainConfig], name: str) -> Any:
    hints = typing.get_type_hints(cls)
    return hints[name]


def _base_type(tp: Any) -> Tuple[type, bool]:
    """(scalar type, optional?) of a field annotation."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) is typing.Union and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        return inner[0], True
    return tp, False


def coerce(cls: Type[TrainConfig], name: str, value: Any, where: str = "") -> Any:
    """Convert ``value`` (from YAML or a CLI string) to the field's type, or raise ConfigError."""
    tp, optional = _base_type(field_type(cls, name))
    prefix = f"{where}: " if where else ""
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{prefix}{name} cannot be empty")
    try:
        if tp is bool:
            if isinstance(value, bool):
                return value
            low = str(value).strip().lower()
            if low in ("true", "yes", "1", "on"):
                return True
            if low in ("false", "no", "0", "off"):
                return False
            raise ValueError(value)
        if tp is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value)
        if tp is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if tp is str:
            if isinstance(value, (dict, list)):
                raise ValueError(value)
            return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{prefix}{name} must be {tp.__name__}, got {value!r}") from None
    return value  # pragma: no cover - every field is one of the above


def normalise_key(key: str) -> str:
    return str(key).strip().replace("-", "_")


def _unknown(method: str, key: str, where: str) -> ConfigError:
    fields = all_fields()
    prefix = f"{where}: " if where else ""
    if key in fields:
        owners = ", ".join(fields[key][1])
        return ConfigError(f"{prefix}{key!r} is not an option of method {method} (it belongs to: {owners})")
    known = ", ".join(field_map(config_class(method)))
    return ConfigError(f"{prefix}unknown config key {key!r} for method {method}; known: {known}")


def read_yaml(path: str | Path) -> Tuple[Dict[str, Any], Dict[str, int]]:
    """Top-level mapping of a YAML config and the line of each key (keys normalised to underscores)."""
    p = Path(path)
    from safebeal.capped import read_capped_text
    from safebeal.capped import MAX_YAML_BYTES

    text = read_capped_text(p, MAX_YAML_BYTES, ConfigError, what="config file")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{p}{line}: malformed YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise ConfigError(f"{p}: a training config must be a mapping of option: value")
    lines: Dict[str, int] = {}
    values: Dict[str, Any] = {}
    for key_node, _ in node.value:
        key = normalise_key(key_node.value)
        if key in lines:
            raise ConfigError(f"{p}:{key_node.start_mark.line + 1}: {key!r} is given twice")
        lines[key] = key_node.start_mark.line + 1
    for key, value in data.items():
        values[normalise_key(key)] = value
    return values, lines


def build_config(
    method: Optional[str] = None,
    config_file: Optional[str | Path] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    validate: bool = True,
) -> TrainConfig:
    """The config for ``method``: defaults, then the YAML file, then ``overrides`` (CLI flags; None = not given).

    The YAML may name the method (``method: dpo``); ``method`` given here wins. Unknown keys, keys of another
    method and values of the wrong type raise ConfigError with the file and line.
    """
    file_values: Dict[str, Any] = {}
    lines: Dict[str, int] = {}
    if config_file is not None:
        file_values, lines = read_yaml(config_file)
    file_method = file_values.pop("method", None)
    method = method or file_method
    if not method:
        raise ConfigError("give --method (sft, dpo, simpo, safe-align or sft+<one of those three>) or 'method:' in "
                          "the config file")
    cls = config_class(str(method))
    known = field_map(cls)
    values: Dict[str, Any] = {}
    for key, value in file_values.items():
        where = f"{config_file}:{lines.get(key, '?')}"
        if key not in known:
            raise _unknown(cls.method, key, where)
        values[key] = coerce(cls, key, value, where)
    for key, value in (overrides or {}).items():
        key = normalise_key(key)
        if value is None:
            continue
        if key not in known:
            raise _unknown(cls.method, key, f"--{key.replace('_', '-')}")
        values[key] = coerce(cls, key, value, f"--{key.replace('_', '-')}")
    cfg = cls(**values)
    if validate:
        cfg.validate()
    return cfg


def parse_sweep(spec: str, method: str) -> Tuple[str, List[Any]]:
    """``alpha=0,0.2,1.0`` -> ("alpha", [0.0, 0.2, 1.0]), values coerced to the field's type."""
    name, sep, rest = spec.partition("=")
    name = normalise_key(name)
    if not sep or not name or not rest.strip():
        raise ConfigError(f"--sweep must look like alpha=0,0.5,1.0, got {spec!r}")
    cls = config_class(method)
    if name not in field_map(cls):
        raise _unknown(method, name, "--sweep")
    if name in ("model", "data", "out"):
        raise ConfigError(f"--sweep cannot vary {name}")
    values = [coerce(cls, name, v.strip(), "--sweep") for v in rest.split(",") if v.strip()]
    if len(set(values)) != len(values):
        raise ConfigError(f"--sweep {name}: repeated values in {spec!r}")
    return name, values
