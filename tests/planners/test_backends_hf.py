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
