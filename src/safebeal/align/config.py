"""Training configuration and the registry of training methods.

A training method is one :class:`TrainingMethod` in :data:`METHODS`: its config dataclass, its trainer builder, the
pair columns it reads and its one-line help (``register_method``; the built-in ones are the modules of
:mod:`safebeal.align.builtin`, one per method). The CLI's flags and help, the data check and the trainer are all
read from it. Every field carries its help text in ``metadata["help"]`` (:func:`option`); the ``safebeal train``
command turns the fields into ``--flags`` (``lora_r`` -> ``--lora-r``, booleans -> ``--lora/--no-lora``) and
``--config file.yaml`` reads the same names (``lora_r`` or ``lora-r``). Precedence: dataclass default < YAML < CLI
flag.

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
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Type

import yaml

from safebeal.errors import SafebealError
from safebeal.registry import Registry


class ConfigError(SafebealError):
    """A bad training configuration (unknown method or key, wrong type, out-of-range value)."""


def option(default: Any, help: str, choices: Optional[Tuple[str, ...]] = None) -> Any:
    """A config field with its help text (shown by ``safebeal train --help``) and, optionally, its choices."""
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

    model: str = option("", "Base model: a hub id (org/name) or a local directory.")
    data: str = option("", "Pair dataset: a datasets.save_to_disk directory, a directory with pairs.jsonl, or a .jsonl file; "
                       "worldmodel:PATH for WorldModel's data (sft only: the world-model baseline).")
    out: str = option("", "Output directory: the trained model (merged, loadable with hf:model=<out>), logs and config.")
    lora: bool = option(True, "Train LoRA adapters (peft) instead of all weights.")
    lora_r: int = option(16, "LoRA rank.")
    lora_alpha: int = option(32, "LoRA scaling alpha (not Safe-Align's alpha).")
    lora_dropout: float = option(0.05, "LoRA dropout.")
    lora_target_modules: str = option("all-linear", "Modules LoRA adapts: 'all-linear' or a comma list such as q_proj,v_proj.")
    overwrite: bool = option(False, "Replace a model or logs already in --out.")
    merge: bool = option(True, "With LoRA: save the merged model in <out> (the adapter always goes to <out>/adapter).")
    lr: float = option(5e-5, "Peak learning rate.")
    epochs: float = option(1.0, "Training epochs (ignored when max_steps > 0).")
    max_steps: int = option(-1, "Stop after this many optimizer steps (-1: use epochs).")
    batch_size: int = option(4, "Pairs (or examples) per device per step.")
    grad_accum: int = option(1, "Gradient accumulation steps.")
    warmup_ratio: float = option(0.0, "Fraction of steps for linear warm-up.")
    weight_decay: float = option(0.0, "AdamW weight decay.")
    seed: int = option(0, "Random seed (data order, LoRA init).")
    max_length: int = option(1024, "Max tokens of prompt + completion; longer completions are truncated.")
    limit: int = option(0, "Use only the first N pairs (0: all).")
    logging_steps: int = option(1, "Log every N optimizer steps.")
    save_steps: int = option(0, "Save a checkpoint every N steps (0: only the final model).")
    device: str = option("auto", "auto, cpu or cuda. auto picks cuda when available.", ("auto", "cpu", "cuda"))
    dtype: str = option("auto", "Weights dtype: auto (bf16 on a bf16 GPU, else float32), float32, bfloat16, float16.",
                    ("auto", "float32", "bfloat16", "float16"))
    bf16: Optional[bool] = option(None, "bf16 mixed precision (default: on with a bf16-capable GPU, always off on CPU).")
    gradient_checkpointing: Optional[bool] = option(
        None, "Gradient checkpointing (default: on with a GPU, where an 8B model needs it to fit 24 GB; always off "
              "on CPU). --no-gradient-checkpointing trades memory for speed.")
    group_by_length: bool = option(False, "Batch examples of similar length together (less padding when lengths vary "
                                      "widely; the batch order is then no longer uniformly random).")
    progress: bool = option(True, "Show a progress bar.")
    trust_remote_code: bool = option(False, "Allow model code from the model directory or hub.")

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

    sft_data: str = option("dataset:activity-train", "SFT stage data, a comma list of sources: dataset:NAME (the "
                                                 "reference plans of a registered dataset, e.g. dataset:activity-train, "
                                                 "prompted as the benchmark prompts them), worldmodel:PATH, or a pair "
                                                 "dataset path (its chosen plans).")
    sft_limit: int = option(0, "SFT stage: use only the first N examples of each source (0: all).")
    sft_lr: float = option(2e-4, "SFT stage peak learning rate.")
    sft_epochs: float = option(1.0, "SFT stage epochs (ignored when sft_max_steps > 0).")
    sft_max_steps: int = option(-1, "SFT stage: stop after this many optimizer steps (-1: use sft_epochs).")
    sft_merge: bool = option(True, "Merge the SFT adapter into the base: the preference stage then trains a fresh LoRA "
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
        "__module__": pref.__module__}))
    return cls


# -- the method registry --------------------------------------------------------------------------------------
#: a method's trainer builder: (cfg, pairs, model, tokenizer, runtime, callbacks) -> a ready transformers Trainer
#: (``runtime``: a :class:`safebeal.align.methods.Runtime`)
Builder = Callable[[Any, Sequence[Any], Any, Any, Any, list], Any]


@dataclass(frozen=True)
class TrainingMethod:
    """One training method, everything the CLI, the data check and the trainer need: its config class (the
    ``--flags`` and YAML keys), its trainer builder, the pair columns it reads and its one-line help.

    Calling it builds its config from keyword values (coerced to each field's type, not validated), so
    ``METHODS.create("dpo:beta=0.2")`` is a :class:`DPOTrainConfig` with ``beta=0.2``."""

    name: str
    config: Type[TrainConfig]
    build: Optional[Builder]  # None for a chained recipe (trained stage by stage by safebeal.align.recipe)
    columns: Tuple[str, ...]
    help: str
    preference: Optional[str] = None  # a chained recipe ``sft+<m>``: the method trained after the SFT stage

    def __call__(self, **values: Any) -> TrainConfig:
        return build_config(self.name, overrides=values, validate=False)


#: every training method by name; the built-in ones register themselves in the modules listed here
METHODS: Registry[TrainConfig] = Registry("method", plugins=(
    "safebeal.align.builtin.sft", "safebeal.align.builtin.dpo", "safebeal.align.builtin.simpo",
    "safebeal.align.builtin.safe_align"))


def register_method(name: str, config: Type[TrainConfig], build: Builder, columns: Sequence[str],
                    help: str) -> TrainingMethod:
    """Register a training method under ``name``; a preference method (its columns include ``rejected``) also gets
    its chained recipe ``sft+<name>`` (SFT on ``--sft-data``, then ``name`` from the SFT model). Sets
    ``config.method`` to ``name``: one config class per method."""
    own = config.__dict__.get("method")
    if own is not None and own != name:
        raise ConfigError(f"config class {config.__name__} already belongs to method {own!r}, not {name!r}")
    missing = [c for c in ("prompt", "chosen") if c not in columns]
    if missing:
        raise ConfigError(f"method {name!r}: every method reads the columns prompt and chosen; missing {missing}")
    config.method = name
    method = TrainingMethod(name, config, build, tuple(columns), help)
    METHODS.register(name, help=help)(method)
    if "rejected" in method.columns:
        chained = TrainingMethod(f"sft+{name}", _chained(config), None, method.columns,
                                 f"SFT on --sft-data, then {name} from the SFT model in one run directory.", name)
        METHODS.register(chained.name, help=chained.help)(chained)
    return method


def training_method(name: str) -> TrainingMethod:
    """The registered method called ``name``; ConfigError naming the known ones otherwise."""
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(METHODS.names())}")
    method = METHODS.get(name).factory
    assert isinstance(method, TrainingMethod), f"{name}: registered without register_method"
    return method


def training_methods() -> List[TrainingMethod]:
    """Every registered method, in the registry's (alphabetical) order."""
    return [training_method(n) for n in METHODS.names()]


def method_choices() -> str:
    """The ``--method`` choices in words: the plain methods, then the chained recipes."""
    plain = [m.name for m in training_methods() if m.preference is None]
    chained = [m.name for m in training_methods() if m.preference is not None]
    return f"{', '.join(plain)}, or a chained recipe {', '.join(chained)}" if chained else ", ".join(plain)


def is_chained(method: str) -> bool:
    return "+" in method


def stage_configs(cfg: TrainConfig, sft_out: str) -> Tuple[TrainConfig, TrainConfig]:
    """(SFT stage config, preference stage config) of a chained config; the SFT stage writes to ``sft_out``, the
    preference stage to ``cfg.out`` and starts from ``sft_out`` when the SFT adapter is merged."""
    if not is_chained(cfg.method):
        raise ConfigError(f"{cfg.method} is not a chained method")
    sft = config_class("sft")(**{n: getattr(cfg, n) for n in SFT_SHARED}, data=cfg.sft_data, out=sft_out,
                              lr=cfg.sft_lr, epochs=cfg.sft_epochs, max_steps=cfg.sft_max_steps, limit=cfg.sft_limit,
                              merge=cfg.sft_merge)
    pref_cls = config_class(cfg.preference_method)
    names = set(field_map(pref_cls))
    pref = pref_cls(**{n: getattr(cfg, n) for n in names})
    if cfg.sft_merge:
        pref.model = sft_out
    return sft, pref


def config_class(method: str) -> Type[TrainConfig]:
    return training_method(method).config


def field_map(cls: Type[TrainConfig]) -> Dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


def all_fields() -> Dict[str, Tuple[dataclasses.Field, List[str]]]:
    """Every field of every method: name -> (field, methods that have it), in the registry's order of methods and
    each config's order of fields."""
    out: Dict[str, Tuple[dataclasses.Field, List[str]]] = {}
    for method in training_methods():
        for f in dataclasses.fields(method.config):
            if f.name in out:
                out[f.name][1].append(method.name)
            else:
                out[f.name] = (f, [method.name])
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
        raise ConfigError(f"give --method ({method_choices()}) or 'method:' in the config file")
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
