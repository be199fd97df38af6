"""``vllm``: offline batched generation with a ``vllm.LLM`` engine (the ``[vllm]`` extra).

The engine is built on the first generation, not when the backend is created, and ``close()`` releases it
(engine deleted, model-parallel state destroyed, CUDA cache emptied); the runner closes each planner's backend
before the next planner starts, so a multi-model comparison holds one engine at a time. A prompt longer than
the engine's ``max_model_len`` fails its own sample, never the batch.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

from safebeal.planners.backends.base import BACKENDS, Backend, model_arg, model_files, resolve_backend_model
from safebeal.planners.backends.records import DEFAULT_SETTINGS, BackendError, Generation, Prompt, render_plain
from safebeal.planners.backends.retry import describe_error


@BACKENDS.register("vllm", help="offline batched generation with vLLM (vllm:model=<hub id or path>)")
class VLLMBackend(Backend):
    """``vllm.LLM`` offline generation. One engine call generates up to ``batch_size`` prompts."""

    name = "vllm"
    defaults = {**DEFAULT_SETTINGS, "top_p": 1.0, "seed": 0}

    def __init__(
        self,
        model: Optional[str] = None,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: Optional[int] = None,
        batch_size: int = 256,
        chat: bool = True,
        trust_remote_code: bool = False,
        max_tokens: Optional[int] = None,
        max_new_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        seed: Optional[int] = None,
        stop: Optional[Any] = None,
        arg: Optional[str] = None,
    ):
        self.model_name = model_arg(model, arg, "vllm")
        try:
            import vllm
        except ImportError:
            raise BackendError("vllm backend needs the vllm package: pip install safebeal[vllm]") from None
        self.path = resolve_backend_model(self.model_name, "vllm")
        self._vllm = vllm
        if int(batch_size) < 1:
            raise BackendError("vllm: batch_size must be >= 1")
        self.stream_batch = int(batch_size)
        self._init_settings(max_tokens=max_tokens, max_new_tokens=max_new_tokens, temperature=temperature,
                            top_p=top_p, seed=seed, stop=stop)
        self.engine_args = {"dtype": str(dtype), "tensor_parallel_size": int(tensor_parallel_size),
                            "gpu_memory_utilization": float(gpu_memory_utilization),
                            "max_model_len": None if max_model_len is None else int(max_model_len),
                            "trust_remote_code": bool(trust_remote_code)}
        self.chat = bool(chat)
        self._llm: Any = None
        self.engines_built = 0  #: how many engines this backend built (one per open/close cycle)

    def config(self) -> Dict[str, Any]:
        return {"model": self.model_name, **self.engine_args, "batch_size": self.stream_batch, "chat": self.chat}

    def identity(self) -> Dict[str, Any]:
        return {"backend": self.name, "model": self.model_name, "model_files": model_files(self.path),
                "dtype": self.engine_args["dtype"], "chat": self.chat}

    # -- the engine's lifetime -----------------------------------------------------------------------------
    @property
    def engine(self) -> Any:
        """The engine, built on first use (a failure to build is a :class:`BackendError`)."""
        if self._llm is None:
            args = {k: v for k, v in self.engine_args.items() if v is not None}
            seed = self.effective_settings().get("seed")
            try:
                self._llm = self._vllm.LLM(model=self.path, seed=seed, **args)
            except Exception as exc:  # noqa: BLE001
                raise BackendError(f"vllm: cannot load {self.model_name!r}: {describe_error(exc)}") from None
            self.engines_built += 1
        return self._llm

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    def release(self) -> None:
        self.close()

    def close(self) -> None:
        if self._llm is None:
            return
        self._llm = None
        import gc

        try:  # vLLM keeps its model-parallel groups (and their GPU memory) in module state
            from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel

            destroy_model_parallel()
            destroy_distributed_environment()
        except Exception:  # noqa: BLE001 - older or fake vLLM: nothing more to release
            pass
        gc.collect()
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass

    # -- generating ----------------------------------------------------------------------------------------
    def _call(self, prompts: List[Prompt], params: Any) -> List[Any]:
        llm = self.engine
        if self.chat:
            return llm.chat(prompts, params, use_tqdm=False)
        return llm.generate([render_plain(p) for p in prompts], params, use_tqdm=False)

    def _to_generation(self, o: Any, latency: float) -> Generation:
        completion = o.outputs[0]
        plen = len(o.prompt_token_ids or [])
        clen = len(completion.token_ids or [])
        return Generation(completion.text, None, latency, 1,
                          {"prompt_tokens": plen, "completion_tokens": clen, "total_tokens": plen + clen},
                          getattr(completion, "finish_reason", None))

    def _generate(self, prompts: List[Prompt], **settings: Any) -> List[Generation]:
        s = self.effective_settings(settings)
        if "reasoning_effort" in s:
            raise BackendError("vllm: reasoning_effort is for reasoning models behind the openai backend")
        start = time.perf_counter()
        try:
            params = self._vllm.SamplingParams(**s)
            outs = self._call(prompts, params)
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. one prompt over max_model_len: retry one at a time
            if len(prompts) == 1:
                return [Generation(None, describe_error(exc), time.perf_counter() - start, 1)]
            out: List[Generation] = []
            for p in prompts:
                out.extend(self._generate([p], **s))
            return out
        latency = time.perf_counter() - start
        return [self._to_generation(o, latency) for o in outs]
