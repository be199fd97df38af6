"""Decoding constrained to the action grammar: the automaton by hand, then ``hf:...,grammar=actions`` on a tiny
random Llama with a byte-level tokenizer (the [train] extra)."""

from __future__ import annotations

import re

import pytest

from safebeal.planners.backends.grammar import START, ActionGrammar

PROMPT = """Objects:
<sink> (42): containers
<faucet> (43): has switch
<mug> (7): grabbable
Allowed actions: [WALK] [GRAB] [PUTBACK] [SWITCHOFF] [STANDUP] [THROW]
"""


def test_the_grammar_of_a_prompt():
    g = ActionGrammar.from_prompt(PROMPT)
    assert dict(g.actions) == {"WALK": (1,), "GRAB": (1,), "PUTBACK": (2,), "SWITCHOFF": (1,), "STANDUP": (0,),
                               "THROW": (1, 2)}
    assert g.objects == (("sink", 42), ("faucet", 43), ("mug", 7))
    assert g.accepts("[WALK] <sink> (42)\n[SWITCHOFF] <faucet> (43)")
    assert g.accepts("[STANDUP]\n[PUTBACK] <mug> (7) <sink> (42)\n")
    assert g.accepts("[THROW] <mug> (7)\n[THROW] <mug> (7) <sink> (42)\n")
    for bad in ["", "[WALK]\n", "[WALK] <sink> (43)\n", "[PUTBACK] <mug> (7)\n", "[STANDUP] <mug> (7)\n",
                "[OPEN] <sink> (42)\n", "[WALK] <kitchen> (1)\n", "[WALK]  <sink> (42)\n", "walk to the sink\n",
                "[WALK] <sink> (42) <mug> (7)\n"]:
        assert not g.accepts(bad), bad


def test_the_automaton_step_by_step():
    g = ActionGrammar.from_prompt(PROMPT)
    assert g.first_chars(START) == frozenset("[")
    st = g.walk(START, "[S")
    assert g.first_chars(st) == frozenset("TW")  # STANDUP, SWITCHOFF
    st = g.walk(START, "[WALK]")
    assert g.first_chars(st) == frozenset(" ")  # WALK needs its argument
    st = g.walk(st, " <")
    assert g.first_chars(st) == frozenset("sfm")
    st = g.walk(START, "[THROW] <mug> (7)")
    assert g.first_chars(st) == frozenset(" \n")  # one argument or two
    assert g.can_stop(st) and g.can_stop(g.walk(st, "\n"))  # a whole line: the last newline is optional
    assert not g.can_stop(START)  # at least one line before the end
    assert g.walk(START, "[WALK] <sink> (4") is not None and g.walk(START, "[WALK] <sink> (44") is None


def test_a_plan_may_end_right_after_its_last_object():
    """Training completions end "... (42)" then EOS (align.encoding): the grammar must let EOS follow a complete
    line, not only a newline. Before, it did not, and a model that had learnt to stop wrote lines until
    max_new_tokens (study C's base: every one of 214 plans; SuccR 0.9%, 13.6% once EOS was allowed)."""
    g = ActionGrammar.from_prompt(PROMPT)
    assert g.can_stop(g.walk(START, "[WALK] <sink> (42)"))
    assert g.can_stop(g.walk(START, "[STANDUP]"))
    assert g.can_stop(g.walk(START, "[WALK] <sink> (42)\n[PUTBACK] <mug> (7) <sink> (42)"))
    assert not g.can_stop(g.walk(START, "[WALK]"))  # its argument is still due
    assert not g.can_stop(g.walk(START, "[WALK] <sink> (4"))
    assert not g.can_stop(g.walk(START, "[PUTBACK] <mug> (7)"))  # PUTBACK takes two
    assert not g.can_stop(g.walk(START, "[WALK] <sink> (42)\n["))


def test_without_objects_only_argument_free_actions():
    g = ActionGrammar.from_prompt("Say what to do. [WALK] [STANDUP] [SLEEP]")
    assert dict(g.actions) == {"STANDUP": (0,), "SLEEP": (0,)} and g.objects == ()
    g = ActionGrammar.from_prompt("<cup> (3)")  # no action named: every known action
    assert "PUTIN" in g.actions and g.accepts("[PUTIN] <cup> (3) <cup> (3)")


torch = None


@pytest.mark.train
def test_hf_generation_stays_in_the_grammar(tmp_path):
    global torch
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from safebeal.planners.backends import BACKENDS, BackendError

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    corpus = [PROMPT, "[WALK] <sink> (42)\n[GRAB] <mug> (7)\n[PUTBACK] <mug> (7) <sink> (42)\n"] * 30
    raw.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "</s>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", eos_token="</s>")
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    tok.save_pretrained(tmp_path)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(tmp_path)

    free = BACKENDS.create(f"hf:model={tmp_path},max_tokens=40")
    constrained = BACKENDS.create(f"hf:model={tmp_path},max_tokens=40,grammar=actions")
    # outputs decoded under another automaton are never replayed from the response cache
    from safebeal.planners.backends.grammar import VERSION

    assert constrained.identity()["grammar_version"] == VERSION == 2 and "grammar_version" not in free.identity()
    prompts = [[{"role": "user", "content": PROMPT}],
               [{"role": "user", "content": PROMPT.replace("<mug> (7): grabbable\n", "")}]]
    raw_out = [g.text for g in free.generate(prompts)]
    assert not all(ActionGrammar.from_prompt(PROMPT).accepts(t) for t in raw_out)  # a random model writes junk
    outs = constrained.generate(prompts)
    line = re.compile(r"^\[[A-Z_]+\]( <[a-z_]+> \(\d+\)){0,2}$")
    for (p,), g in zip(prompts, outs):
        grammar = ActionGrammar.from_prompt(p["content"])
        assert g.error is None and g.text
        # every line is whole: a line cut off by max_tokens is dropped; a plan that stopped may end without "\n"
        assert grammar.accepts(g.text) and (g.text.endswith("\n") or g.finish_reason == "stop")
        assert all(line.match(ln) for ln in g.text.rstrip("\n").split("\n"))
    # the second prompt has no mug: no line names it
    assert "<mug>" not in outs[1].text
    with pytest.raises(BackendError, match="unknown grammar 'json'"):
        BACKENDS.create(f"hf:model={tmp_path},grammar=json")
