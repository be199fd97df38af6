"""The hf backend end to end on a tiny random Llama saved to disk (needs the [train] extra)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from safebeal.planners.backends import BACKENDS, BackendError, HFBackend  # noqa: E402

pytestmark = pytest.mark.train

CORPUS = [
    "walk to the kitchen and open the fridge",
    "grab the knife and cut the apple carefully",
    "switch on the stove then put the pan on the stove",
    "turn off the faucet before leaving the bathroom",
    "System: you plan household tasks. User: make tea. Assistant: walk to kitchen",
] * 20

CHAT_TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tiny-llama")
    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(
        CORPUS, trainers.BpeTrainer(vocab_size=200, special_tokens=["<pad>", "<unk>", "<s>", "</s>"])
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    tok.save_pretrained(path)

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(path)

    chat = tmp_path_factory.mktemp("tiny-llama-chat")
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(chat)
    model.save_pretrained(chat)
    return path, chat


@pytest.fixture(scope="module")
def tiny_model(tiny_model_dir):
    return tiny_model_dir[0]


@pytest.fixture(scope="module")
def tiny_chat_model(tiny_model_dir):
    return tiny_model_dir[1]


PROMPTS = [
    [{"role": "user", "content": "open the fridge"}],
    [{"role": "system", "content": "You plan household tasks."},
     {"role": "user", "content": "grab the knife and cut the apple then switch on the stove"}],
    "walk",
]


def test_hf_backend_generates_a_deterministic_batch(tiny_model):
    backend = BACKENDS.create(f"hf:model={tiny_model},max_new_tokens=6,batch_size=3,device=cpu")
    assert isinstance(backend, HFBackend) and backend.device == "cpu"
    assert backend.tokenizer.padding_side == "left"
    first = backend.generate(PROMPTS)
    second = backend.generate(PROMPTS)
    assert len(first) == 3
    assert all(g.ok and isinstance(g.text, str) for g in first)
    assert [g.text for g in first] == [g.text for g in second]  # greedy
    for g in first:
        assert 1 <= g.usage["completion_tokens"] <= 6
    lengths = [g.usage["prompt_tokens"] for g in first]
    assert len(set(lengths)) == 3  # genuinely different prompt lengths in one padded batch
    assert any(g.text.strip() for g in first)
    # only the new text comes back: the 24-token second prompt is not echoed into it
    assert len(backend.tokenizer(first[1].text, add_special_tokens=False).input_ids) <= 12


def test_hf_batching_matches_one_by_one(tiny_model):
    """Left padding must not change greedy outputs: batch of 3 == three batches of 1."""
    batched = BACKENDS.create(f"hf:{tiny_model}", max_new_tokens=5, batch_size=3, device="cpu")
    single = BACKENDS.create(f"hf:{tiny_model}", max_new_tokens=5, batch_size=1, device="cpu")
    assert [g.text for g in batched.generate(PROMPTS)] == [g.text for g in single.generate(PROMPTS)]
    assert batched.config()["model"] == str(tiny_model)


def test_hf_plain_rendering_without_chat_template(tiny_model):
    backend = BACKENDS.create(f"hf:model={tiny_model},max_new_tokens=2,device=cpu")
    assert backend.uses_chat_template is False
    text = backend.render([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "System: S\n\nUser: U\n\nAssistant:"


def test_hf_uses_the_chat_template_when_present(tiny_chat_model):
    backend = BACKENDS.create(f"hf:model={tiny_chat_model},max_new_tokens=3,device=cpu")
    assert backend.uses_chat_template is True
    text = backend.render([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "<s>system: S\n<s>user: U\nassistant:"
    out = backend.generate(PROMPTS)
    assert all(g.ok for g in out) and out[0].usage["prompt_tokens"] == len(
        backend.tokenizer(backend.render(PROMPTS[0]), add_special_tokens=False).input_ids)


def test_hf_nonexistent_path_raises(tmp_path):
    with pytest.raises(BackendError, match="does not exist"):
        BACKENDS.create(f"hf:model={tmp_path / 'no-model'}")


def test_hf_directory_without_model_raises(tmp_path):
    with pytest.raises(BackendError, match="cannot load"):
        BACKENDS.create(f"hf:model={tmp_path}")


# -- identical inputs across backends (issue 18) ----------------------------------------------------------------
NO_BOS_TEMPLATE = (  # like many instruct templates (and the transformers serve / vLLM chat path): no BOS written
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _server_ids(tok, prompt):
    """What an OpenAI-compatible server (vLLM chat, transformers serve) feeds the model: the chat template's text,
    tokenised without added special tokens."""
    text = tok.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    return tok(text, add_special_tokens=False)["input_ids"]


@pytest.fixture(scope="module")
def no_bos_chat_model(tiny_model_dir, tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = tiny_model_dir[0]
    tok = AutoTokenizer.from_pretrained(src)
    tok.chat_template = NO_BOS_TEMPLATE
    path = tmp_path_factory.mktemp("tiny-llama-nobos")
    tok.save_pretrained(path)
    AutoModelForCausalLM.from_pretrained(src).save_pretrained(path)
    return path


def test_hf_feeds_the_same_token_ids_as_a_server(no_bos_chat_model, tiny_chat_model, tiny_model):
    """Was: hf put a BOS in front of every prompt, servers do not when the template writes none, so the same
    model got different input and greedy outputs diverged. Now the template decides, as it does on a server."""
    for path, writes_bos in ((no_bos_chat_model, False), (tiny_chat_model, True)):
        backend = BACKENDS.create(f"hf:model={path},max_new_tokens=4,device=cpu")
        tok = backend.tokenizer
        for prompt in PROMPTS[:2]:
            ids = backend._encode([backend.render(prompt)])["input_ids"][0].tolist()
            assert ids == _server_ids(tok, prompt)
            assert (ids[0] == tok.bos_token_id) is writes_bos
            assert ids.count(tok.bos_token_id) == (len(prompt) if writes_bos else 0)  # one <s> per message, no extra
    # without a chat template (plain rendering) BOS goes in front, as a completion server's tokenizer would add it
    plain = BACKENDS.create(f"hf:model={tiny_model},max_new_tokens=4,device=cpu")
    ids = plain._encode([plain.render(PROMPTS[0])])["input_ids"][0].tolist()
    assert ids[0] == plain.tokenizer.bos_token_id and ids.count(plain.tokenizer.bos_token_id) == 1


def test_hf_greedy_output_equals_generation_from_the_server_ids(no_bos_chat_model):
    """Same model, same prompt, greedy: the hf backend's text is what the model generates from the ids a server
    would build (no divergence at token 10 any more)."""
    backend = BACKENDS.create(f"hf:model={no_bos_chat_model},max_new_tokens=12,device=cpu")
    tok, model = backend.tokenizer, backend.model
    prompt = PROMPTS[1]
    ids = torch.tensor([_server_ids(tok, prompt)])
    with torch.inference_mode():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False,
                             pad_token_id=tok.pad_token_id)
    expected = tok.decode(out[0, ids.shape[1]:].tolist(), skip_special_tokens=True)
    [g] = backend.generate([prompt])
    assert g.text == expected[: len(g.text)] and len(g.text) > 0
    assert g.finish_reason in ("stop", "length") and g.usage["prompt_tokens"] == ids.shape[1]


def test_hf_backend_passes_check_backend(tiny_chat_model):
    from safebeal.testing import check_backend

    gens = check_backend(f"hf:model={tiny_chat_model},device=cpu", max_tokens=4)
    assert len(gens) == 2 and all(g.ok and g.finish_reason == "length" for g in gens)  # 4 new tokens, no stop
