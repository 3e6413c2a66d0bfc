#!/usr/bin/python3
"""PyTorch's side of the lm scaling sweep (scripts/bench_scaling.sh).

The reference workload "lm" of ../shared/bench/torch_reference.py, resized: the same
TinyLM (imported from that file, not copied) with width D and context T, SwiGLU width 3 * D
(384 at 128), still 4 layers, 4 heads, vocab 128 and batch 16, trained with the same step
and timed the same way as the reference's lm(): AdamW lr 3e-4 on random tokens, 5 warm-up
steps, then the mean of --steps steps. Prints the reference's JSON line plus "d_model" and
"context", e.g.

    /usr/bin/python3 tests/reference/lm_scaling.py --d-model 256 --context 128 \\
        --threads 1 --blas-threads 2

At --d-model 128 --context 128 it is the reference's lm workload itself.
Needs Debian's python3-torch (run it with /usr/bin/python3). Never run by CI.
"""

import argparse
import importlib.util
import os
import pathlib
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_REFERENCE = REPO / ".." / "shared" / "bench" / "torch_reference.py"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--d-model", type=int, default=128, help="width (a multiple of 4 heads)")
    p.add_argument("--context", type=int, default=128, help="tokens per sequence (batch 16)")
    p.add_argument("--steps", type=int, default=20, help="timed steps after 5 warm-up steps")
    p.add_argument("--threads", type=int, default=1, help="PyTorch intra-op threads")
    p.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads")
    p.add_argument("--reference", type=pathlib.Path, default=DEFAULT_REFERENCE,
                   help="torch_reference.py to import (default: %(default)s)")
    a = p.parse_args()
    if a.d_model <= 0 or a.d_model % 4:
        p.error(f"--d-model must be a positive multiple of the 4 heads, got {a.d_model}")
    for name in ("context", "steps", "threads"):
        if getattr(a, name) <= 0:
            p.error(f"--{name} must be positive")
    return a


def import_reference(path):
    """torch_reference.py as a module. Its own --blas-threads handling runs only when it is
    the main program, so main() sets OPENBLAS_NUM_THREADS before this import (which imports
    torch, and OpenBLAS reads the variable once, when it loads)."""
    if not path.is_file():
        sys.exit(f"lm_scaling.py: {path} not found (pass --reference)")
    spec = importlib.util.spec_from_file_location("torch_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    a = parse_args()
    if a.blas_threads is not None:
        os.environ["OPENBLAS_NUM_THREADS"] = str(a.blas_threads)
    ref = import_reference(a.reference)
    torch, F = ref.torch, ref.F
    torch.set_num_threads(a.threads)

    # What the reference's lm() does, with D and T free: the same seed, model, optimizer and
    # random tokens drawn in the same order, 5 untimed steps, then the mean of the timed ones.
    torch.manual_seed(0)
    V, T, B, D = 128, a.context, 16, a.d_model
    model = ref.TinyLM(vocab=V, ctx=T, d=D, layers=4, heads=4, dff=3 * D)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    tokens = torch.randint(0, V, (a.steps + 5, B, T + 1))  # each batch: inputs + next token

    def train_on(batch):
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for batch in tokens[:5]:
        train_on(batch)
    start = time.perf_counter()
    for batch in tokens[5:]:
        loss = train_on(batch)
    dt = (time.perf_counter() - start) / a.steps
    ref.emit(workload="tiny_lm_train_step", threads=torch.get_num_threads(),
             params=sum(p.numel() for p in model.parameters()), ms_per_step=round(dt * 1e3, 3),
             tokens_per_s=round(B * T / dt, 1), last_loss=round(loss.item(), 4), d_model=D,
             context=T)


if __name__ == "__main__":
    main()
