"""Fixtures for the Safe-Align training tests: a tiny random Llama with a BPE tokenizer trained on the fly,
saved to a temp folder and loaded back through ``from_pretrained``, and a toy pair set written as pairs.jsonl."""

from __future__ import annotations

import json

import pytest

from safebeal.datasets.base import Task
from safebeal.planners.prompts import actions_block, build_messages, completion_text
from safebeal.planners.texts import read_template as template

#: (instruction, objects, safe plan, unsafe plan, k)
TOY = [
    ("Cook some food", [("stove", 5), ("pot", 7), ("kitchen", 1)],
     ["[WALK] <kitchen> (1)", "[WALK] <stove> (5)", "[SWITCHON] <stove> (5)", "[SWITCHOFF] <stove> (5)"],
     ["[WALK] <kitchen> (1)", "[WALK] <stove> (5)", "[SWITCHON] <stove> (5)"], 3),
    ("Wash the dishes", [("faucet", 9), ("sink", 8), ("kitchen", 1)],
     ["[WALK] <sink> (8)", "[SWITCHON] <faucet> (9)", "[SWITCHOFF] <faucet> (9)"],
     ["[WALK] <sink> (8)", "[SWITCHON] <faucet> (9)"], 2),
    ("Get a drink", [("freezer", 3), ("kitchen", 1)],
     ["[WALK] <freezer> (3)", "[OPEN] <freezer> (3)", "[CLOSE] <freezer> (3)"],
     ["[WALK] <freezer> (3)", "[OPEN] <freezer> (3)"], 2),
    ("Cut an apple", [("knife", 4), ("apple", 6), ("kitchen", 1)],
     ["[WALK] <knife> (4)", "[GRAB] <knife> (4)", "[CUT] <apple> (6)", "[PUTBACK] <knife> (4) <kitchen> (1)"],
     ["[WALK] <knife> (4)", "[GRAB] <knife> (4)", "[CUT] <apple> (6)", "[DROP] <knife> (4)"], 3),
]


def toy_pairs():
    out = []
    for i, (instr, objs, safe, unsafe, k) in enumerate(TOY):
        task = Task(id=f"t{i}", dataset="toy", instruction=instr, objects=objs)
        # the simulator's vocabulary (actions="vh"): the toy pairs keep the prompts the loss tests' figures were
        # taken on (with the extended actions listed, the 20-step run no longer reaches pair accuracy 1.0)
        out.append({"prompt": build_messages(task, actions="vh"), "chosen": completion_text(safe), "rejected": completion_text(unsafe),
                    "prefix_actions": k, "category": "fire_heat", "task_id": task.id, "source": "mutation:toy"})
    return out


def corpus():
    lines = [template("system"), template("user"), actions_block("vh")]
    for p in toy_pairs():
        lines += [p["chosen"], p["rejected"]] + [m["content"] for m in p["prompt"]]
    return lines * 3


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """Path of a saved tiny random Llama (2 layers, hidden 64) with a byte-level BPE tokenizer (no chat template)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tiny-llama")
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(corpus(), trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<pad>", "<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    tok.save_pretrained(path)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                         pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(config).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def toy_rows():
    """The toy pairs as records (prompt from build_messages, chosen, rejected, prefix_actions, ...)."""
    return toy_pairs()


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory):
    """A directory with pairs.jsonl holding the toy pairs."""
    d = tmp_path_factory.mktemp("pairs")
    (d / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in toy_pairs()))
    return d
