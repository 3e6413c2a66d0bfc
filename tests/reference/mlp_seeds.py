"""PyTorch's side of the accuracy comparison in docs/performance.md.

Runs the reference's `mlp` workload (../shared/bench/torch_reference.py) for five epochs with
another seed: the reference seeds with torch.manual_seed(0); here that call uses SEED instead.
Nothing else changes, so the JSON lines are the reference's own.

    /usr/bin/python3 tests/reference/mlp_seeds.py SEED [--reference PATH]
"""
import argparse
import os
import sys
import types

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("seed", type=int)
parser.add_argument("--reference", default=os.path.join(here, "..", "..", "..", "shared", "bench"),
                    help="directory of torch_reference.py")
parser.add_argument("--epochs", type=int, default=5)
args = parser.parse_args()

sys.path.insert(0, os.path.abspath(args.reference))
import torch  # noqa: E402
import torch_reference  # noqa: E402

manual_seed = torch.manual_seed
torch_reference.torch.manual_seed = lambda _ignored: manual_seed(args.seed)
torch.set_num_threads(1)
torch_reference.mlp(types.SimpleNamespace(epochs=args.epochs, threads=1))
