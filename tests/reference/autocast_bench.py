#!/usr/bin/python3
"""PyTorch's side of tapegrad-bench's bfloat16 lines (`tapegrad-bench lm --dtype bf16` and
`tapegrad-bench ops --dtype bf16`): the reference's lm workload and its linear_fwd_bwd shapes
with the forward under torch.autocast("cpu", dtype=torch.bfloat16), timed as
../shared/bench/torch_reference.py times them, printing the same JSON lines plus "dtype".

    /usr/bin/python3 tests/reference/autocast_bench.py lm --threads 2
    /usr/bin/python3 tests/reference/autocast_bench.py linear --threads 2
    /usr/bin/python3 tests/reference/autocast_bench.py lm --dtype f32   # the same, no autocast

The model, optimizer, data and timing are the reference's (TinyLM is imported from that file,
not copied; the lm step is lm_scaling.py's at --d-model 128 --context 128). Needs Debian's
python3-torch (run it with /usr/bin/python3). Never run by CI.
"""

import argparse
import contextlib
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lm_scaling  # noqa: E402  (its import_reference and DEFAULT_REFERENCE)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", choices=["lm", "linear"])
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    p.add_argument("--threads", type=int, default=1, help="PyTorch intra-op threads")
    p.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads")
    p.add_argument("--steps", type=int, default=20, help="lm: timed steps after 5 warm-ups")
    p.add_argument("--reference", type=pathlib.Path, default=lm_scaling.DEFAULT_REFERENCE)
    a = p.parse_args()
    if a.blas_threads is not None:
        os.environ["OPENBLAS_NUM_THREADS"] = str(a.blas_threads)
    ref = lm_scaling.import_reference(a.reference)
    torch, F = ref.torch, ref.F
    torch.set_num_threads(a.threads)

    def autocast():
        if a.dtype == "f32":
            return contextlib.nullcontext()
        return torch.autocast("cpu", dtype=torch.bfloat16)

    if a.workload == "linear":
        torch.manual_seed(0)
        for (m, k, n) in [(128, 784, 256), (2048, 128, 384), (512, 512, 512), (1024, 1024, 1024)]:
            x = torch.randn(m, k, requires_grad=True)
            w = torch.randn(n, k, requires_grad=True)
            b = torch.randn(n, requires_grad=True)

            def f(x=x, w=w, b=b):
                with autocast():
                    y = F.linear(x, w, b)
                y.sum().backward()
            s = ref.bench(f)
            ref.emit(workload="linear_fwd_bwd", dtype=a.dtype, threads=torch.get_num_threads(),
                     shape=[m, k, n], ms=round(s * 1e3, 4),
                     gflops=round(6 * m * k * n / s / 1e9, 2))
        return

    torch.manual_seed(0)
    V, T, B, D = 128, 128, 16, 128
    model = ref.TinyLM(vocab=V, ctx=T, d=D, layers=4, heads=4, dff=3 * D)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    tokens = torch.randint(0, V, (a.steps + 5, B, T + 1))

    def train_on(batch):
        with autocast():
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
    ref.emit(workload="tiny_lm_train_step", dtype=a.dtype, threads=torch.get_num_threads(),
             params=sum(p.numel() for p in model.parameters()), ms_per_step=round(dt * 1e3, 3),
             tokens_per_s=round(B * T / dt, 1), last_loss=round(loss.item(), 4))


if __name__ == "__main__":
    main()
