"""The from-scratch planner: a byte-level BPE tokenizer trained on the training corpus and a random Llama.

The tokenizer carries a chat template, so every path renders a prompt the same way and with one BOS:
``safebeal.planners.backends.render_for_tokenizer`` (the ``hf`` benchmark backend and Safe-Align), TRL's SFT, DPO
and CPO trainers (they tokenise the rendered text without adding special tokens, or add BOS only when missing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Sequence

from .settings import ModelSettings

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
#: the messages' contents one per line after BOS, then "Plan:" and a newline where the plan starts
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ m['content'] | trim }}\n{% endfor %}"
    "{% if add_generation_prompt %}Plan:\n{% endif %}"
)


def train_tokenizer(texts: Sequence[str], vocab_size: int, out: Path, max_length: int) -> Any:
    """Train a byte-level BPE on ``texts`` and save it as a transformers fast tokenizer in ``out``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(list(texts), trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[PAD, BOS, EOS], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token=PAD, bos_token=BOS, eos_token=EOS,
                                  model_max_length=max_length)
    tok.chat_template = CHAT_TEMPLATE
    out.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(out)
    return tok


def init_model(tok: Any, settings: ModelSettings, out: Path, seed: int = 0) -> Dict[str, Any]:
    """Save a randomly initialised Llama (with ``tok``) to ``out``; returns its size."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id, **settings.model_dump())
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tok.pad_token_id
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    n = sum(p.numel() for p in model.parameters())
    emb = model.get_input_embeddings().weight.numel()
    return {"parameters": n, "non_embedding_parameters": n - emb, "config": settings.model_dump()}


def token_lengths(tok: Any, rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Prompt and completion lengths in tokens (completion + EOS), as the trainers see them."""
    from safebeal.planners.backends import render_for_tokenizer

    prompts = sorted(len(tok(render_for_tokenizer(tok, r["prompt"]), add_special_tokens=False)["input_ids"])
                     for r in rows)
    comps = sorted(len(tok(r["chosen"], add_special_tokens=False)["input_ids"]) + 1 for r in rows)

    def stats(xs: List[int]) -> Dict[str, Any]:
        if not xs:
            return {}
        return {"min": xs[0], "median": xs[len(xs) // 2], "p95": xs[min(len(xs) - 1, int(0.95 * len(xs)))],
                "p99": xs[min(len(xs) - 1, int(0.99 * len(xs)))], "max": xs[-1], "n": len(xs)}

    return {"prompt": stats(prompts), "completion": stats(comps)}
