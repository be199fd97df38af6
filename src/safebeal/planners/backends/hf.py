"""``hf``: batched local generation with ``transformers`` (the ``[hf]`` extra)."""

from __future__ import annotations

import re
import time
from typing import Any, Dict, List, Optional

from safebeal.planners.backends.base import BACKENDS, Backend, model_arg, model_files, resolve_backend_model
from safebeal.planners.backends.records import (
    DEFAULT_SETTINGS,
    BackendError,
    Generation,
    Prompt,
    prompt_token_ids,
    render_for_tokenizer,
)
from safebeal.planners.backends.retry import describe_error

@BACKENDS.register("hf", help="local transformers model (hf:model=<hub id or path>)")
class HFBackend(Backend):
    """Batched generation with ``transformers`` (the ``[hf]`` extra; ``[train]`` includes it).

    Prompts are rendered with the tokenizer's chat template if it has one, else with
    :func:`render_plain`, and tokenised as servers do (:func:`prompt_token_ids`); batches are left-padded;
    decoding is greedy unless ``temperature > 0``. Only the newly generated text is returned. Model and
    tokenizer load at construction. ``grammar=actions`` constrains decoding to plan lines over the actions and
    objects the prompt names (:mod:`safebeal.planners.backends.grammar`).
    """

    name = "hf"
    defaults = {**DEFAULT_SETTINGS, "top_p": 1.0, "seed": 0}
    extra_settings = ("grammar",)

    def __init__(
        self,
        model: Optional[str] = None,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: Optional[int] = None,
        batch_size: int = 8,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        seed: Optional[int] = None,
        trust_remote_code: bool = False,
        max_tokens: Optional[int] = None,
        stop: Optional[Any] = None,
        grammar: Optional[str] = None,
        arg: Optional[str] = None,
    ):
        self.model_name = model_arg(model, arg, "hf")
        if int(batch_size) < 1:
            raise BackendError("hf: batch_size must be >= 1")
        self._init_settings(max_tokens=max_tokens, max_new_tokens=max_new_tokens, temperature=temperature,
                            top_p=top_p, seed=seed, stop=stop, grammar=grammar)
        self._check_grammar(self.spec_settings.get("grammar"))
        path = resolve_backend_model(self.model_name, "hf")
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise BackendError(f"hf backend needs torch and transformers ({exc.name} is missing): "
                               f"pip install safebeal[hf]") from None
        self._torch = torch
        self.device = self._pick_device(torch, str(device))
        self.dtype_name = str(dtype)
        torch_dtype = self._pick_dtype(torch, self.dtype_name, self.device)
        self.batch_size = self.stream_batch = int(batch_size)
        self.path = path
        self.trust_remote_code = bool(trust_remote_code)
        try:
            tok = transformers.AutoTokenizer.from_pretrained(path, trust_remote_code=self.trust_remote_code)
        except Exception as exc:  # noqa: BLE001 - OSError, ValueError, hub errors
            raise BackendError(f"hf: cannot load tokenizer from {self.model_name!r}: {describe_error(exc)}") from None
        tok.padding_side = "left"
        if tok.pad_token is None:
            fallback = tok.eos_token if tok.eos_token is not None else tok.unk_token
            if fallback is None:
                raise BackendError(f"hf: tokenizer of {self.model_name!r} has no pad, eos or unk token")
            tok.pad_token = fallback
        self.tokenizer = tok
        major_minor = tuple(int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
        dtype_kw = "dtype" if major_minor >= (4, 56) else "torch_dtype"
        try:
            net = transformers.AutoModelForCausalLM.from_pretrained(
                path, trust_remote_code=self.trust_remote_code, **{dtype_kw: torch_dtype})
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"hf: cannot load model from {self.model_name!r}: {describe_error(exc)}") from None
        self.model = net.to(self.device).eval()
        self.uses_chat_template = bool(getattr(tok, "chat_template", None))

    @staticmethod
    def _pick_device(torch: Any, device: str) -> str:
        if device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise BackendError(f"hf: device {device!r} requested but CUDA is not available")
        return device

    @staticmethod
    def _pick_dtype(torch: Any, dtype: str, device: str) -> Any:
        if dtype == "auto":
            if device.startswith("cuda"):
                return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            return torch.float32
        table = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
                 "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}
        if dtype not in table:
            raise BackendError(f"hf: unknown dtype {dtype!r}; use auto, {', '.join(table)}")
        return table[dtype]

    def config(self) -> Dict[str, Any]:
        return {"model": self.model_name, "device": self.device, "dtype": self.dtype_name,
                "batch_size": self.batch_size, "trust_remote_code": self.trust_remote_code}

    def identity(self) -> Dict[str, Any]:
        ident = {"backend": self.name, "model": self.model_name, "model_files": model_files(self.path),
                 "dtype": self.dtype_name}
        if self.spec_settings.get("grammar"):
            from safebeal.planners.backends.grammar import VERSION

            ident["grammar_version"] = VERSION
        return ident

    def render(self, prompt: Prompt) -> str:
        return render_for_tokenizer(self.tokenizer, prompt)

    def _encode(self, texts: List[str]) -> Any:
        """Token ids as servers and Safe-Align training build a prompt (:func:`prompt_token_ids`: the rendered text
        without added special tokens; BOS in front only for plain rendering), left-padded into a batch."""
        tok = self.tokenizer
        ids = [prompt_token_ids(tok, t) for t in texts]
        return tok.pad({"input_ids": ids}, padding=True, return_tensors="pt")

    @staticmethod
    def _check_grammar(grammar: Optional[str]) -> None:
        from safebeal.planners.backends.grammar import GRAMMARS

        if grammar is not None and grammar not in GRAMMARS:
            raise BackendError(f"hf: unknown grammar {grammar!r}; known: {', '.join(GRAMMARS)}")

    def _grammar_processor(self, texts: List[str], prompt_length: int) -> Any:
        from safebeal.planners.backends.grammar import ActionGrammar, GrammarLogitsProcessor, token_texts

        if getattr(self, "_token_texts", None) is None:
            self._token_texts = token_texts(self.tokenizer)
        return GrammarLogitsProcessor([ActionGrammar.from_prompt(t) for t in texts], self.tokenizer, prompt_length,
                                      texts=self._token_texts)

    def _run_batch(self, texts: List[str], max_new: int, temperature: float, top_p: float,
                   seed: int, stop: Optional[List[str]] = None, grammar: Optional[str] = None) -> List[tuple]:
        torch = self._torch
        enc = self._encode(texts).to(self.device)
        kwargs: Dict[str, Any] = {"max_new_tokens": max_new, "pad_token_id": self.tokenizer.pad_token_id}
        if grammar == "actions":
            kwargs["logits_processor"] = [self._grammar_processor(texts, enc["input_ids"].shape[1])]
        if temperature > 0:
            torch.manual_seed(seed)
            kwargs.update(do_sample=True, temperature=temperature, top_p=top_p)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            out = self.model.generate(**enc, **kwargs)
        new = out[:, enc["input_ids"].shape[1]:].cpu()
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        eos = self.tokenizer.eos_token_id
        results = []
        pad = self.tokenizer.pad_token_id
        for row, plen in zip(new.tolist(), prompt_lens):
            n, finish = len(row), "length"
            if eos is not None and eos in row:
                n, finish = row.index(eos) + 1, "stop"
            elif pad is not None and pad in row:  # a row that ended early is padded to the batch's length
                n, finish = row.index(pad), "stop"
            text = self.tokenizer.decode(row[:n], skip_special_tokens=True)
            for s in stop or ():
                if s in text:
                    text, finish = text[: text.index(s)], "stop"
            if grammar == "actions" and finish == "length" and not text.endswith("\n"):
                text = text[: text.rfind("\n") + 1]  # a plan line cut off by max_tokens is dropped, not parsed
            results.append((text, {"prompt_tokens": int(plen), "completion_tokens": n,
                                   "total_tokens": int(plen) + n}, finish))
        return results

    def _generate(self, prompts: List[Prompt], **settings: Any) -> List[Generation]:
        s = self.effective_settings(settings)
        if "reasoning_effort" in s:
            raise BackendError("hf: reasoning_effort is for reasoning models behind the openai backend")
        max_new, temperature, top_p, seed = int(s["max_tokens"]), float(s["temperature"]), float(s["top_p"]), int(s["seed"])
        stop = s.get("stop")
        grammar = s.get("grammar")
        self._check_grammar(grammar)
        out: List[Generation] = []
        for i in range(0, len(prompts), self.batch_size):
            chunk = prompts[i:i + self.batch_size]
            start = time.perf_counter()
            try:
                texts = [self.render(p) for p in chunk]
                results = self._run_batch(texts, max_new, temperature, top_p, seed, stop, grammar)
            except Exception as exc:  # noqa: BLE001 - e.g. OOM: fall back to one prompt at a time
                if len(chunk) == 1:
                    out.append(Generation(None, describe_error(exc), time.perf_counter() - start, 1))
                    continue
                for p in chunk:
                    out.extend(self._generate([p], **s))
                continue
            latency = time.perf_counter() - start
            out.extend(Generation(text, None, latency, 1, usage, finish) for text, usage, finish in results)
        return out

    def close(self) -> None:
        if getattr(self, "model", None) is not None:
            self.model = None
            import gc

            gc.collect()
            torch = self._torch
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
