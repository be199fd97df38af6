"""The GPU recipe, tried (issue 32, item 5): train a few Safe-Align LoRA steps on CUDA, in float32 and in bf16,
generate with the ``hf`` and ``vllm`` backends, and check them against the CPU path.

    OMP_NUM_THREADS=1 python benchmarks/gpu_check.py --out gpu_check/        # or: bash benchmarks/gpu_check.sh

Everything is built here (no model download): a tiny random Llama with a byte-level BPE tokenizer trained on the
pair texts, saved to a folder and loaded back through ``from_pretrained``, and a small pair set from
``safebeal pairs build --limit``. The same ``safebeal train`` command runs on ``--device cpu`` (float32, no bf16,
the reference), ``--device cuda --dtype float32 --no-bf16`` and ``--device cuda --bf16``; each run's per-step
losses (``train_log.jsonl``) are compared with the CPU's: float32 within ``--tol-fp32`` (relative), bf16 within
``--tol-bf16``. Greedy generation: ``hf`` on CUDA in float32 must give the CPU's text; ``vllm`` (when installed) is
run and its texts recorded beside it (a different kernel stack: agreement is reported, not required).

Writes ``<out>/gpu_check.json`` and prints one line per check. Exit 0 when every check that could run passed, 1
when one failed. Without CUDA only the CPU path runs: the report says so (``"cuda": null``) and the exit is 0, so
the script itself is tested on CPU (tests/benchmarks/test_gpu_check.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional


def tiny_model(path: Path, texts: List[str], seed: int = 0) -> Path:
    """A random 2-layer Llama (hidden 64) and a byte-level BPE tokenizer trained on ``texts``, saved to ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=512, special_tokens=["<pad>", "<s>", "</s>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    tok.save_pretrained(path)
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=8192,
                      pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(path)
    return path


def _safebeal() -> List[str]:
    return [sys.executable, "-m", "safebeal"]


def _run(cmd: List[str], log: Path) -> None:
    with open(log, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}; see {log}")


def losses(run: Path) -> List[float]:
    """The per-step training losses a run logged (``train_log.jsonl``, lines with a ``loss``)."""
    out = []
    for line in (run / "train_log.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "loss" in rec:
            out.append(float(rec["loss"]))
    return out


def max_rel_diff(a: List[float], b: List[float]) -> Optional[float]:
    if len(a) != len(b) or not a:
        return None
    return max(abs(x - y) / max(abs(y), 1e-8) for x, y in zip(a, b))


def train(model: Path, pairs: Path, out: Path, steps: int, device: str, extra: List[str]) -> Dict[str, Any]:
    t0 = time.perf_counter()
    _run(_safebeal() + ["train", "--method", "safe-align", "--model", str(model), "--data", str(pairs),
                        "--out", str(out), "--max-steps", str(steps), "--logging-steps", "1", "--batch-size", "2",
                        "--seed", "0", "--device", device, "--no-progress", "--max-length", "6144"] + extra,
         out.with_suffix(".log"))
    return {"losses": losses(out), "seconds": round(time.perf_counter() - t0, 1)}


def generate(spec: str, prompts: List[Any]) -> List[str]:
    from safebeal.planners.backends import BACKENDS

    backend = BACKENDS.create(spec)
    return [g.text for g in backend.generate(prompts, max_new_tokens=24, temperature=0.0)]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("gpu_check"))
    ap.add_argument("--steps", type=int, default=4, help="training steps per run")
    ap.add_argument("--limit", type=int, default=16, help="ActivityPrograms safe plans the pair set is built from (16 give 3 pairs)")
    ap.add_argument("--tol-fp32", type=float, default=1e-2)
    ap.add_argument("--tol-bf16", type=float, default=5e-2)
    a = ap.parse_args(argv)
    import torch

    a.out.mkdir(parents=True, exist_ok=True)
    cuda = torch.cuda.is_available()
    report: Dict[str, Any] = {"torch": torch.__version__, "cuda": torch.cuda.get_device_name(0) if cuda else None,
                              "steps": a.steps, "checks": {}}
    pairs = a.out / "pairs"
    # no length balance: a few plans' pairs are one-sided on length and would all be dropped
    _run(_safebeal() + ["pairs", "build", "--out", str(pairs), "--sources", "mutation", "--limit", str(a.limit),
                        "--length-balance", "0", "--workers", "1", "--quiet"], a.out / "pairs.log")
    rows = [json.loads(x) for x in (pairs / "pairs.jsonl").read_text().splitlines()]
    if not rows:
        raise SystemExit(f"{pairs}/pairs.jsonl: no pairs were built (--limit {a.limit})")
    texts = [m["content"] for r in rows for m in r["prompt"] + r["chosen"] + r["rejected"]]
    model = tiny_model(a.out / "model", texts * 2)
    report["pairs"] = len(rows)
    ok = True

    def check(name: str, passed: Optional[bool], **info: Any) -> None:
        nonlocal ok
        report["checks"][name] = {"passed": passed, **info}
        ok = ok and passed is not False
        print(f"{name}: {'skipped' if passed is None else 'ok' if passed else 'FAILED'} {json.dumps(info)}")

    cpu = train(model, pairs, a.out / "cpu", a.steps, "cpu", ["--dtype", "float32", "--no-bf16"])
    check("train_cpu", len(cpu["losses"]) == a.steps and all(x == x for x in cpu["losses"]), **cpu)
    prompts = [r["prompt"] for r in rows[:2]]
    hf_cpu = generate(f"hf:model={model},device=cpu,dtype=float32", prompts)
    check("generate_hf_cpu", all(isinstance(t, str) for t in hf_cpu), texts=hf_cpu)
    if not cuda:
        print("no CUDA device: the GPU checks are skipped (the CPU path above ran)")
        for name in ("train_cuda_fp32", "train_cuda_bf16", "generate_hf_cuda", "generate_vllm"):
            check(name, None, reason="no CUDA device")
    else:
        g32 = train(model, pairs, a.out / "cuda_fp32", a.steps, "cuda", ["--dtype", "float32", "--no-bf16"])
        d = max_rel_diff(g32["losses"], cpu["losses"])
        check("train_cuda_fp32", d is not None and d <= a.tol_fp32, max_rel_diff=d, **g32)
        g16 = train(model, pairs, a.out / "cuda_bf16", a.steps, "cuda", ["--bf16"])
        d = max_rel_diff(g16["losses"], cpu["losses"])
        check("train_cuda_bf16", d is not None and d <= a.tol_bf16, max_rel_diff=d, **g16)
        hf_gpu = generate(f"hf:model={model},device=cuda,dtype=float32", prompts)
        check("generate_hf_cuda", hf_gpu == hf_cpu, texts=hf_gpu)
        try:
            import vllm  # noqa: F401
        except ImportError as exc:
            check("generate_vllm", None, reason=f"vllm is not installed ({exc})")
        else:
            vl = generate(f"vllm:model={model}", prompts)
            check("generate_vllm", all(isinstance(t, str) for t in vl), texts=vl, same_as_hf=vl == hf_gpu)
    report["passed"] = ok
    (a.out / "gpu_check.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {a.out / 'gpu_check.json'}: {'all checks that ran passed' if ok else 'a check FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
