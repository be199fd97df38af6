"""Loading a model and its tokenizer for training, and the error a training run raises
(:mod:`safebeal.align.methods` trains them, :mod:`safebeal.align.merge` merges a LoRA adapter into one)."""

from __future__ import annotations

from typing import Any

from safebeal.align.preflight import resolve_training_model
from safebeal.errors import SafebealError


class TrainError(SafebealError):
    pass


def load_tokenizer(model: str, trust_remote_code: bool = False) -> Any:
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(resolve_training_model(model), trust_remote_code=trust_remote_code)
    except SafebealError:
        raise
    except Exception as exc:  # noqa: BLE001 - OSError, ValueError, hub errors
        raise TrainError(f"cannot load the tokenizer of {model!r}: {type(exc).__name__}: {exc}") from None
    if tok.pad_token is None:
        if tok.eos_token is None:
            raise TrainError(f"the tokenizer of {model!r} has neither a pad nor an eos token")
        tok.pad_token = tok.eos_token
    if tok.eos_token is None:
        raise TrainError(f"the tokenizer of {model!r} has no eos token (completions must end with EOS)")
    return tok


def load_model(model: str, dtype: str = "float32", trust_remote_code: bool = False) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    try:
        return AutoModelForCausalLM.from_pretrained(resolve_training_model(model), dtype=getattr(torch, dtype),
                                                    trust_remote_code=trust_remote_code)
    except SafebealError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise TrainError(f"cannot load the model {model!r}: {type(exc).__name__}: {exc}") from None
