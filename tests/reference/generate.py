#!/usr/bin/python3
"""PyTorch reference fixtures for tapegrad's differentiable primitives.

Run with Debian's Python (the only Python in the project; CI never runs it):

    /usr/bin/python3 tests/reference/generate.py            # rewrite tests/reference/fixtures/
    /usr/bin/python3 tests/reference/generate.py --check    # regenerate to a temp dir, compare
    /usr/bin/python3 tests/reference/generate.py --out DIR  # write somewhere else
    /usr/bin/python3 tests/reference/generate.py --only softmax   # just these families

For every case it runs one op in PyTorch and stores, in one .safetensors file per op family:

    <case>.in0, <case>.in1, ...   the inputs (contiguous values; see "layout" below)
    <case>.out                    the output (or <case>.out0, <case>.out1, ... for several)
    <case>.gout                   a random upstream gradient (or .gout0, ...; only for
                                  floating-point outputs)
    <case>.grad0, ...             d(sum(out * gout))/d(in_i) for every input PyTorch
                                  differentiated (every floating-point input, unless the
                                  case is forward-only)

and in "__metadata__" (string -> string, as the format requires):

    <case>.op            the op, e.g. "sum" (tests/ops/reference_test.cpp maps it to C++)
    <case>.<param>       each parameter as a JSON value: "[0, -1]", "true", "0.5", "null"
    <case>.layout.in<i>  how input i was made non-contiguous, so the C++ side can rebuild the
                         same strides from the stored values:
                           "transpose D0 D1"  base = values with dims D0, D1 swapped, made
                                              contiguous; input = base.transpose(D0, D1)
                           "slice D STEP"     base = zeros with size * STEP along dim D;
                                              input = base[..., ::STEP, ...] filled with values

Each case seeds its own generator from the CRC-32 of its name, so adding or removing a case
never changes the others.
"""

import argparse
import filecmp
import functools
import json
import os
import struct
import sys
import tempfile
import zlib

import torch

F64 = torch.float64
F32 = torch.float32

# ----------------------------------------------------------------------------- the file format

_DTYPE_NAMES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.bool: "BOOL",
}
_DTYPES = {v: k for k, v in _DTYPE_NAMES.items()}
_SAME_SIZE_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _tensor_bytes(t):
    """Row-major little-endian bytes of t (numpy has no bfloat16, so go through an int view)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bool:
        return t.to(torch.uint8).numpy().tobytes()
    as_int = t.view(_SAME_SIZE_INT[t.element_size()]).numpy()
    return as_int.astype(as_int.dtype.newbyteorder("<")).tobytes()


def write_safetensors(path, tensors, metadata):
    """Writes the safetensors format by hand (there is no safetensors package here):
    8-byte little-endian header length N, N bytes of JSON (padded with spaces so that the data
    starts at a multiple of 8), then the tensors' bytes packed in sorted-name order."""
    header = {"__metadata__": dict(sorted(metadata.items()))}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        data = _tensor_bytes(t)
        header[name] = {
            "dtype": _DTYPE_NAMES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    """The inverse of write_safetensors: ({name: tensor}, metadata)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    data = raw[8 + n :]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        dtype = _DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        chunk = bytearray(data[begin:end])
        if dtype == torch.bool:
            t = torch.frombuffer(chunk, dtype=torch.uint8).to(torch.bool) if chunk else None
        else:
            t = torch.frombuffer(chunk, dtype=dtype) if chunk else None
        if t is None:
            t = torch.empty(0, dtype=dtype)
        tensors[name] = t.reshape(entry["shape"]).clone()
    return tensors, metadata


# ----------------------------------------------------------------------------- cases


class Inputs:
    """Seeded input makers for one case, in the case's dtype."""

    def __init__(self, name, dtype):
        self.gen = torch.Generator().manual_seed(zlib.crc32(name.encode("utf-8")))
        self.dtype = dtype

    def randn(self, *shape):
        return torch.randn(shape, generator=self.gen, dtype=F64).to(self.dtype)

    def pos(self, *shape):
        """Uniform in [0.5, 2): safely inside the domain of log, sqrt, rsqrt, division."""
        return (torch.rand(shape, generator=self.gen, dtype=F64) * 1.5 + 0.5).to(self.dtype)

    def small_ints(self, *shape, high=3):
        """Values in {0, 1, ..., high-1} as floats: lots of ties for max/min conventions."""
        return torch.randint(0, high, shape, generator=self.gen).to(self.dtype)

    def index(self, high, *shape):
        return torch.randint(0, high, shape, generator=self.gen, dtype=torch.int64)

    def mask(self, *shape):
        return torch.rand(shape, generator=self.gen) < 0.5


def _with_layout(values, layout):
    """A non-contiguous tensor holding `values`, built as "<case>.layout.in<i>" describes."""
    kind, *args = layout.split()
    if kind == "transpose":
        d0, d1 = int(args[0]), int(args[1])
        return values.transpose(d0, d1).contiguous().transpose(d0, d1)
    if kind == "slice":
        dim, step = int(args[0]), int(args[1])
        shape = list(values.shape)
        shape[dim] *= step
        base = torch.zeros(shape, dtype=values.dtype)
        index = [slice(None)] * values.dim()
        index[dim] = slice(None, None, step)
        view = base[tuple(index)]
        view.copy_(values)
        return view
    raise ValueError(f"unknown layout {layout!r}")


class Family:
    """The cases of one fixture file."""

    def __init__(self, name):
        self.name = name
        self.tensors = {}
        self.metadata = {}

    def case(self, name, op, make_inputs, fn, dtype=F64, layouts=None, grad=True, **params):
        """Adds case `name`: make_inputs(Inputs) -> list of tensors; fn(*inputs) -> tensor or
        tuple of tensors. `params` are what the C++ side needs to call the op (they are stored
        and not used here: fn must agree with them)."""
        assert "." not in name and f"{name}.op" not in self.metadata, name
        layouts = layouts or {}
        r = Inputs(name, dtype)
        values = [v.detach().clone() for v in make_inputs(r)]
        inputs = []
        for i, v in enumerate(values):
            x = _with_layout(v, layouts[i]) if i in layouts else v.clone()
            assert (i not in layouts) or not x.is_contiguous(), (name, i)
            if grad and x.is_floating_point():
                x.requires_grad_()
            inputs.append(x)
        result = fn(*inputs)
        outs = list(result) if isinstance(result, (tuple, list)) else [result]
        # A random upstream gradient for every floating-point output, by output position.
        gouts = {k: torch.randn(o.shape, generator=r.gen, dtype=F64).to(o.dtype)
                 for k, o in enumerate(outs) if o.is_floating_point()}
        wrt = [x for x in inputs if x.requires_grad]
        grads = []
        if wrt:
            grads = torch.autograd.grad([outs[k] for k in gouts], wrt, list(gouts.values()))

        def put(key, t):
            self.tensors[f"{name}.{key}"] = t.detach().contiguous().clone()

        for i, v in enumerate(values):
            put(f"in{i}", v)
        single = len(outs) == 1
        for k, o in enumerate(outs):
            put("out" if single else f"out{k}", o)
        for k, g in gouts.items():
            put("gout" if single else f"gout{k}", g)
        grad_iter = iter(grads)
        for i, x in enumerate(inputs):
            if x.requires_grad:
                g = next(grad_iter)
                assert g is not None, (name, i)
                put(f"grad{i}", g)
        self.metadata[f"{name}.op"] = op
        for key, value in params.items():
            self.metadata[f"{name}.{key}"] = json.dumps(value)
        for i, layout in layouts.items():
            self.metadata[f"{name}.layout.in{i}"] = layout

    def write(self, directory):
        meta = dict(self.metadata)
        meta["generator"] = "tests/reference/generate.py"
        meta["torch_version"] = torch.__version__
        write_safetensors(os.path.join(directory, f"{self.name}.safetensors"), self.tensors, meta)


# ----------------------------------------------------------------------------- the op families


def arithmetic():
    f = Family("arithmetic")
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
    for op, fn in binary.items():
        rhs = (lambda r, *s: r.pos(*s)) if op == "div" else (lambda r, *s: r.randn(*s))
        f.case(f"{op}_same", op, lambda r: [r.randn(3, 4), rhs(r, 3, 4)], fn)
        f.case(f"{op}_bcast_row", op, lambda r: [r.randn(3, 1), rhs(r, 4)], fn)
        f.case(f"{op}_bcast_3d", op, lambda r: [r.randn(2, 1, 5), rhs(r, 7, 1)], fn)
        f.case(f"{op}_ones", op, lambda r: [r.randn(1), rhs(r, 1, 1)], fn)
        f.case(f"{op}_scalar0d", op, lambda r: [r.randn(), rhs(r, 7)], fn)
        f.case(f"{op}_tposed", op, lambda r: [r.randn(4, 3), rhs(r, 4, 3)], fn,
               layouts={0: "transpose 0 1"})
        f.case(f"{op}_sliced", op, lambda r: [r.randn(2, 7), rhs(r, 7)], fn,
               layouts={0: "slice 1 2", 1: "slice 0 3"})
        f.case(f"{op}_bcast_f32", op, lambda r: [r.randn(3, 1, 7), rhs(r, 2, 1)], fn, dtype=F32)
    f.case("neg_basic", "neg", lambda r: [r.randn(3, 7)], torch.neg)
    f.case("neg_tposed", "neg", lambda r: [r.randn(5, 3)], torch.neg,
           layouts={0: "transpose 0 1"})
    f.case("neg_f32", "neg", lambda r: [r.randn(7)], torch.neg, dtype=F32)
    # Scalar forms: x op s (and s op x for rsub, rdiv), s a plain number with no gradient.
    scalar_forms = {
        "add_scalar": lambda x, s: x + s,
        "sub_scalar": lambda x, s: x - s,
        "rsub_scalar": lambda x, s: s - x,
        "mul_scalar": lambda x, s: x * s,
        "div_scalar": lambda x, s: x / s,
        "rdiv_scalar": lambda x, s: s / x,
    }
    for op, fn in scalar_forms.items():
        make = (lambda r: [r.pos(3, 7)]) if op == "rdiv_scalar" else (lambda r: [r.randn(3, 7)])
        for suffix, s, dtype in (("", 1.75, F64), ("_neg", -0.3, F64), ("_f32", 0.1, F32)):
            f.case(f"{op}{suffix}", op, make, lambda x, s=s, fn=fn: fn(x, s), dtype=dtype,
                   scalar=s)
        f.case(f"{op}_tposed", op, make, lambda x, fn=fn: fn(x, 2.5),
               layouts={0: "transpose 0 1"}, scalar=2.5)
    return f


def unary():
    f = Family("unary")
    for p in (2.0, 3.0, -1.0, 0.0, 1.0):  # integer exponents: any sign of x
        f.case(f"pow_int{int(p)}".replace("-", "m"), "pow", lambda r: [r.randn(3, 7)],
               lambda x, p=p: torch.pow(x, p), exponent=p)
    for p in (0.5, -1.5, 2.5):  # fractional exponents: positive x only
        f.case(f"pow_frac{p}".replace(".", "p").replace("-", "m"), "pow",
               lambda r: [r.pos(7, 3)], lambda x, p=p: torch.pow(x, p), exponent=p)
    f.case("pow_tposed", "pow", lambda r: [r.randn(4, 3)], lambda x: torch.pow(x, 3.0),
           layouts={0: "transpose 0 1"}, exponent=3.0)
    f.case("pow_f32", "pow", lambda r: [r.pos(2, 7)], lambda x: torch.pow(x, 1.5), dtype=F32,
           exponent=1.5)
    # At x = 0: p * 0^(p-1) is 0 for p > 1, 1 for p = 1, +inf for 0 < p < 1; 0 for p = 0.
    for p in (2.0, 1.0, 0.5, 0.0):
        f.case(f"pow_at_zero{p}".replace(".", "p"), "pow",
               lambda r: [torch.tensor([0.0, 1.5, 0.0, 2.0], dtype=r.dtype)],
               lambda x, p=p: torch.pow(x, p), exponent=p)

    plain = {"exp": (torch.exp, "randn"), "log": (torch.log, "pos"),
             "sqrt": (torch.sqrt, "pos"), "rsqrt": (torch.rsqrt, "pos"),
             "abs": (torch.abs, "randn")}
    for op, (fn, maker) in plain.items():
        f.case(f"{op}_basic", op, lambda r, m=maker: [getattr(r, m)(3, 7)], fn)
        f.case(f"{op}_ones", op, lambda r, m=maker: [getattr(r, m)(1, 1)], fn)
        f.case(f"{op}_0d", op, lambda r, m=maker: [getattr(r, m)()], fn)
        f.case(f"{op}_tposed", op, lambda r, m=maker: [getattr(r, m)(7, 2)], fn,
               layouts={0: "transpose 0 1"})
        f.case(f"{op}_sliced", op, lambda r, m=maker: [getattr(r, m)(5)], fn,
               layouts={0: "slice 0 2"})
        f.case(f"{op}_f32", op, lambda r, m=maker: [getattr(r, m)(3, 5)], fn, dtype=F32)
    # Kinks and singularities: abs'(0) = 0; sqrt'(0) = +inf; log(0) = -inf with log'(0) = +inf.
    zeros_and_more = lambda r: [torch.tensor([0.0, -1.25, 0.0, 2.0, -0.0], dtype=r.dtype)]
    f.case("abs_at_zero", "abs", zeros_and_more, torch.abs)
    f.case("sqrt_at_zero", "sqrt", lambda r: [torch.tensor([0.0, 4.0], dtype=r.dtype)],
           torch.sqrt)
    f.case("log_at_zero", "log", lambda r: [torch.tensor([0.0, 3.0], dtype=r.dtype)], torch.log)

    for name, lo, hi in (("both", -0.5, 0.75), ("min_only", 0.25, None),
                         ("max_only", None, -0.1)):
        f.case(f"clamp_{name}", "clamp", lambda r: [r.randn(3, 7)],
               lambda x, lo=lo, hi=hi: torch.clamp(x, lo, hi), min=lo, max=hi)
    f.case("clamp_tposed", "clamp", lambda r: [r.randn(7, 3)],
           lambda x: torch.clamp(x, -0.5, 0.5), layouts={0: "transpose 0 1"}, min=-0.5, max=0.5)
    # Bounds are rounded to float32 first (0.1 and -0.3 are not floats).
    f.case("clamp_f32", "clamp", lambda r: [r.randn(4, 7)], lambda x: torch.clamp(x, -0.3, 0.1),
           dtype=F32, min=-0.3, max=0.1)
    # Elements exactly at a bound keep their gradient (min <= x <= max, bounds included).
    at_bounds = lambda r: [torch.tensor([-1.0, -0.5, 0.0, 0.5, 1.0, 0.5, -0.5], dtype=r.dtype)]
    f.case("clamp_at_bounds", "clamp", at_bounds, lambda x: torch.clamp(x, -0.5, 0.5),
           min=-0.5, max=0.5)
    f.case("clamp_equal_bounds", "clamp", at_bounds, lambda x: torch.clamp(x, 0.5, 0.5),
           min=0.5, max=0.5)
    return f


def reduce():
    f = Family("reduce")
    for op, fn in (("sum", torch.sum), ("mean", torch.mean), ("amax", torch.amax),
                   ("amin", torch.amin)):
        def call(x, dims, keepdim, fn=fn):
            # tapegrad's empty dim list means every dim; spell that out for PyTorch.
            return fn(x, dim=tuple(dims) if dims else tuple(range(x.dim())), keepdim=keepdim)

        for name, shape, dims, keepdim, layout in (
            ("all", (3, 7), [], False, None),
            ("all_keep", (3, 7), [], True, None),
            ("dim1", (2, 7, 3), [1], False, None),
            ("dims02_keep", (2, 7, 3), [0, 2], True, None),
            ("neg", (3, 1, 5), [-1], False, None),
            ("size1", (3, 1, 5), [1], True, None),
            ("0d", (), [], False, None),
            ("tposed", (5, 3), [0], False, "transpose 0 1"),
            ("sliced", (4, 3), [1], True, "slice 1 2"),
        ):
            f.case(f"{op}_{name}", op, lambda r, s=shape: [r.randn(*s)],
                   lambda x, d=dims, k=keepdim: call(x, d, k),
                   layouts={0: layout} if layout else None, dims=dims, keepdim=keepdim)
        f.case(f"{op}_f32", op, lambda r: [r.randn(3, 7)], lambda x: call(x, [1], False),
               dtype=F32, dims=[1], keepdim=False)
    # Ties: amax/amin split the gradient evenly among the elements equal to the extreme.
    for op, fn in (("amax", torch.amax), ("amin", torch.amin)):
        f.case(f"{op}_ties", op, lambda r: [r.small_ints(4, 7)],
               lambda x, fn=fn: fn(x, dim=1), dims=[1], keepdim=False)
        f.case(f"{op}_ties_all", op, lambda r: [r.small_ints(3, 5, high=2)],
               lambda x, fn=fn: fn(x, dim=(0, 1)), dims=[], keepdim=False)
    # max(x, dim) / min(x, dim): values and int64 indices; ties go to the first occurrence.
    for op, fn in (("max_dim", torch.max), ("min_dim", torch.min)):
        for name, shape, dim, keepdim, layout, maker in (
            ("basic", (3, 7), 1, False, None, "randn"),
            ("keep", (2, 7, 3), 1, True, None, "randn"),
            ("neg", (4, 5), -2, False, None, "randn"),
            ("1d", (7,), 0, False, None, "randn"),
            ("tposed", (5, 3), 0, False, "transpose 0 1", "randn"),
            ("ties", (4, 7), 1, False, None, "small_ints"),
        ):
            f.case(f"{op}_{name}", op, lambda r, s=shape, m=maker: [getattr(r, m)(*s)],
                   lambda x, d=dim, k=keepdim, fn=fn: tuple(fn(x, dim=d, keepdim=k)),
                   layouts={0: layout} if layout else None, dim=dim, keepdim=keepdim)
        f.case(f"{op}_f32", op, lambda r: [r.randn(3, 7)],
               lambda x, fn=fn: tuple(fn(x, dim=0)), dtype=F32, dim=0, keepdim=False)
    # max(x) / min(x): a 0-d result; ties split the gradient evenly (as amax over all dims).
    for op, fn in (("max_all", torch.max), ("min_all", torch.min)):
        f.case(f"{op}_basic", op, lambda r: [r.randn(3, 7)], fn)
        f.case(f"{op}_ties", op, lambda r: [r.small_ints(3, 5, high=2)], fn)
        f.case(f"{op}_tposed", op, lambda r: [r.randn(7, 2)], fn, layouts={0: "transpose 0 1"})
    return f


def matmul():
    f = Family("matmul")
    for name, a, b, layouts in (
        ("dot", (7,), (7,), None),
        ("mm", (3, 7), (7, 5), None),
        ("mm_ones", (1, 1), (1, 7), None),
        ("vec_mat", (7,), (2, 7, 3), None),
        ("mat_vec", (2, 3, 7), (7,), None),
        ("batched", (2, 3, 4), (2, 4, 5), None),
        ("bcast", (2, 1, 3, 4), (5, 4, 2), None),
        ("bcast_2d", (3, 4), (2, 4, 5), None),
        ("tposed_a", (3, 7), (7, 2), {0: "transpose 0 1"}),
        ("tposed_b", (3, 7), (7, 2), {1: "transpose 0 1"}),
        ("sliced", (3, 4), (4, 3), {0: "slice 1 2", 1: "slice 0 2"}),
    ):
        f.case(f"matmul_{name}", "matmul", lambda r, a=a, b=b: [r.randn(*a), r.randn(*b)],
               torch.matmul, layouts=layouts)
    f.case("matmul_f32", "matmul", lambda r: [r.randn(5, 7), r.randn(7, 3)], torch.matmul,
           dtype=F32)
    f.case("matmul_bcast_f32", "matmul", lambda r: [r.randn(2, 1, 3, 4), r.randn(3, 4, 2)],
           torch.matmul, dtype=F32)
    return f


def join():
    f = Family("join")
    f.case("cat_dim0", "cat", lambda r: [r.randn(2, 3), r.randn(1, 3), r.randn(4, 3)],
           lambda *xs: torch.cat(xs, 0), dim=0)
    f.case("cat_dim1", "cat", lambda r: [r.randn(2, 3, 2), r.randn(2, 7, 2)],
           lambda *xs: torch.cat(xs, 1), dim=1)
    f.case("cat_neg", "cat", lambda r: [r.randn(3, 1), r.randn(3, 5)],
           lambda *xs: torch.cat(xs, -1), dim=-1)
    f.case("cat_one", "cat", lambda r: [r.randn(7)], lambda *xs: torch.cat(xs, 0), dim=0)
    f.case("cat_tposed", "cat", lambda r: [r.randn(4, 3), r.randn(4, 2)],
           lambda *xs: torch.cat(xs, 1), layouts={0: "transpose 0 1"}, dim=1)
    f.case("cat_f32", "cat", lambda r: [r.randn(2, 3), r.randn(2, 3)],
           lambda *xs: torch.cat(xs, 0), dtype=F32, dim=0)
    f.case("stack_dim0", "stack", lambda r: [r.randn(3, 7), r.randn(3, 7), r.randn(3, 7)],
           lambda *xs: torch.stack(xs, 0), dim=0)
    f.case("stack_mid", "stack", lambda r: [r.randn(2, 5), r.randn(2, 5)],
           lambda *xs: torch.stack(xs, 1), dim=1)
    f.case("stack_last", "stack", lambda r: [r.randn(4), r.randn(4)],
           lambda *xs: torch.stack(xs, -1), dim=-1)
    f.case("stack_0d", "stack", lambda r: [r.randn(), r.randn()],
           lambda *xs: torch.stack(xs, 0), dim=0)
    f.case("stack_tposed", "stack", lambda r: [r.randn(3, 2), r.randn(3, 2)],
           lambda *xs: torch.stack(xs, 0), layouts={1: "transpose 0 1"}, dim=0)
    f.case("stack_f32", "stack", lambda r: [r.randn(3), r.randn(3)],
           lambda *xs: torch.stack(xs, 0), dtype=F32, dim=0)
    f.case("split_size", "split", lambda r: [r.randn(7, 2)],
           lambda x: torch.split(x, 3, 0), split_size=3, dim=0)
    f.case("split_size_dim1", "split", lambda r: [r.randn(2, 7)],
           lambda x: torch.split(x, 2, -1), split_size=2, dim=-1)
    f.case("split_sizes", "split", lambda r: [r.randn(3, 7)],
           lambda x: torch.split(x, [2, 0, 5], 1), sizes=[2, 0, 5], dim=1)
    f.case("split_tposed", "split", lambda r: [r.randn(5, 3)],
           lambda x: torch.split(x, [1, 4], 0), layouts={0: "transpose 0 1"}, sizes=[1, 4], dim=0)
    f.case("split_f32", "split", lambda r: [r.randn(7)], lambda x: torch.split(x, 4, 0),
           dtype=F32, split_size=4, dim=0)
    f.case("chunk_uneven", "chunk", lambda r: [r.randn(7, 3)],
           lambda x: torch.chunk(x, 3, 0), chunks=3, dim=0)
    f.case("chunk_fewer", "chunk", lambda r: [r.randn(2, 6)],
           lambda x: torch.chunk(x, 4, 1), chunks=4, dim=1)
    f.case("chunk_one", "chunk", lambda r: [r.randn(1, 5)],
           lambda x: torch.chunk(x, 2, 0), chunks=2, dim=0)
    f.case("chunk_tposed", "chunk", lambda r: [r.randn(3, 4)],
           lambda x: torch.chunk(x, 2, 1), layouts={0: "transpose 0 1"}, chunks=2, dim=1)
    return f


def index():
    f = Family("index")
    ix = lambda values: torch.tensor(values, dtype=torch.int64)
    f.case("index_select_rows", "index_select", lambda r: [r.randn(5, 3), ix([4, 0, 4, 2])],
           lambda x, i: torch.index_select(x, 0, i), dim=0)
    f.case("index_select_cols", "index_select", lambda r: [r.randn(2, 7, 2), r.index(7, 9)],
           lambda x, i: torch.index_select(x, 1, i), dim=1)
    f.case("index_select_neg", "index_select", lambda r: [r.randn(3, 4), ix([3, 3, 1])],
           lambda x, i: torch.index_select(x, -1, i), dim=-1)
    f.case("index_select_0d", "index_select", lambda r: [r.randn(4, 3), torch.tensor(2)],
           lambda x, i: torch.index_select(x, 0, i), dim=0)
    f.case("index_select_tposed", "index_select", lambda r: [r.randn(4, 6), r.index(6, 5)],
           lambda x, i: torch.index_select(x, 1, i), layouts={0: "transpose 0 1"}, dim=1)
    f.case("index_select_f32", "index_select", lambda r: [r.randn(7, 2), r.index(7, 4)],
           lambda x, i: torch.index_select(x, 0, i), dtype=F32, dim=0)
    f.case("gather_dim1", "gather", lambda r: [r.randn(3, 5), r.index(5, 3, 7)],
           lambda x, i: torch.gather(x, 1, i), dim=1)
    f.case("gather_dim0", "gather", lambda r: [r.randn(4, 3), r.index(4, 2, 3)],
           lambda x, i: torch.gather(x, 0, i), dim=0)
    f.case("gather_smaller", "gather", lambda r: [r.randn(4, 5, 3), r.index(5, 2, 7, 1)],
           lambda x, i: torch.gather(x, 1, i), dim=1)
    f.case("gather_tposed", "gather", lambda r: [r.randn(5, 3), r.index(3, 4, 6)],
           lambda x, i: torch.gather(x, -1, i), layouts={0: "transpose 0 1"}, dim=-1)
    f.case("gather_f32", "gather", lambda r: [r.randn(3, 4), r.index(3, 2, 4)],
           lambda x, i: torch.gather(x, 0, i), dtype=F32, dim=0)
    f.case("where_same", "where", lambda r: [r.mask(3, 4), r.randn(3, 4), r.randn(3, 4)],
           torch.where)
    f.case("where_bcast", "where", lambda r: [r.mask(3, 1), r.randn(1, 7), r.randn(3, 7)],
           torch.where)
    f.case("where_bcast_all", "where", lambda r: [r.mask(2, 1, 5), r.randn(3, 1), r.randn(5)],
           torch.where)
    f.case("where_tposed", "where", lambda r: [r.mask(4, 3), r.randn(4, 3), r.randn(4, 3)],
           torch.where, layouts={0: "transpose 0 1", 2: "transpose 0 1"})
    f.case("where_f32", "where", lambda r: [r.mask(7), r.randn(7), r.randn(1)], torch.where,
           dtype=F32)
    f.case("masked_fill_same", "masked_fill", lambda r: [r.randn(3, 7), r.mask(3, 7)],
           lambda x, m: x.masked_fill(m, -2.5), value=-2.5)
    f.case("masked_fill_bcast", "masked_fill", lambda r: [r.randn(3, 7), r.mask(7)],
           lambda x, m: x.masked_fill(m, 0.0), value=0.0)
    f.case("masked_fill_tposed", "masked_fill", lambda r: [r.randn(5, 3), r.mask(5, 1)],
           lambda x, m: x.masked_fill(m, 1.0), layouts={0: "transpose 0 1"}, value=1.0)
    f.case("masked_fill_f32", "masked_fill", lambda r: [r.randn(2, 7), r.mask(2, 1)],
           lambda x, m: x.masked_fill(m, 0.1), dtype=F32, value=0.1)
    return f


def _pyslice(x, dim, start, end, step):
    index = [slice(None)] * x.dim()
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def view():
    f = Family("view")
    T = {0: "transpose 0 1"}
    f.case("view_basic", "view", lambda r: [r.randn(3, 4)], lambda x: x.view(2, 6),
           shape=[2, 6])
    f.case("view_infer", "view", lambda r: [r.randn(2, 7, 1)], lambda x: x.view(-1, 2),
           shape=[-1, 2])
    f.case("view_0d", "view", lambda r: [r.randn(1, 1)], lambda x: x.view([]), shape=[])
    f.case("view_f32", "view", lambda r: [r.randn(6)], lambda x: x.view(3, 2), dtype=F32,
           shape=[3, 2])
    f.case("reshape_basic", "reshape", lambda r: [r.randn(2, 3, 2)],
           lambda x: x.reshape(3, -1), shape=[3, -1])
    f.case("reshape_tposed", "reshape", lambda r: [r.randn(3, 5)], lambda x: x.reshape(15),
           layouts=T, shape=[15])
    f.case("permute_3d", "permute", lambda r: [r.randn(2, 3, 7)],
           lambda x: x.permute(2, 0, 1), dims=[2, 0, 1])
    f.case("permute_neg", "permute", lambda r: [r.randn(2, 1, 3)],
           lambda x: x.permute(-1, 0, 1), dims=[-1, 0, 1])
    f.case("permute_tposed", "permute", lambda r: [r.randn(4, 3)], lambda x: x.permute(1, 0),
           layouts=T, dims=[1, 0])
    f.case("transpose_basic", "transpose", lambda r: [r.randn(2, 3, 7)],
           lambda x: x.transpose(0, 2), dim0=0, dim1=2)
    f.case("transpose_neg", "transpose", lambda r: [r.randn(2, 3, 4)],
           lambda x: x.transpose(-1, 1), dim0=-1, dim1=1)
    f.case("t_basic", "t", lambda r: [r.randn(3, 7)], lambda x: x.t())
    f.case("t_1d", "t", lambda r: [r.randn(5)], lambda x: x.t())
    f.case("expand_basic", "expand", lambda r: [r.randn(3, 1)], lambda x: x.expand(3, 7),
           shape=[3, 7])
    f.case("expand_new_dims", "expand", lambda r: [r.randn(1, 4)],
           lambda x: x.expand(2, 3, -1, 4), shape=[2, 3, -1, 4])
    f.case("expand_0d", "expand", lambda r: [r.randn()], lambda x: x.expand(5), shape=[5])
    f.case("expand_f32", "expand", lambda r: [r.randn(2, 1)], lambda x: x.expand(2, 3),
           dtype=F32, shape=[2, 3])
    f.case("narrow_basic", "narrow", lambda r: [r.randn(7, 3)], lambda x: x.narrow(0, 2, 4),
           dim=0, start=2, length=4)
    f.case("narrow_neg", "narrow", lambda r: [r.randn(2, 7)], lambda x: x.narrow(-1, 6, 1),
           dim=-1, start=6, length=1)
    f.case("narrow_tposed", "narrow", lambda r: [r.randn(5, 4)], lambda x: x.narrow(1, 1, 3),
           layouts=T, dim=1, start=1, length=3)
    f.case("slice_step", "slice", lambda r: [r.randn(3, 7)],
           lambda x: _pyslice(x, 1, 1, 6, 2), dim=1, start=1, end=6, step=2)
    f.case("slice_clamped", "slice", lambda r: [r.randn(7)],
           lambda x: _pyslice(x, 0, -3, 100, 1), dim=0, start=-3, end=100, step=1)
    f.case("slice_step3", "slice", lambda r: [r.randn(7, 2)],
           lambda x: _pyslice(x, 0, 0, 7, 3), dim=0, start=0, end=7, step=3)
    f.case("select_basic", "select", lambda r: [r.randn(3, 7)], lambda x: x.select(1, 4),
           dim=1, index=4)
    f.case("select_neg", "select", lambda r: [r.randn(4, 2, 3)], lambda x: x.select(0, -1),
           dim=0, index=-1)
    f.case("select_to_0d", "select", lambda r: [r.randn(5)], lambda x: x.select(0, 2),
           dim=0, index=2)
    f.case("select_tposed", "select", lambda r: [r.randn(3, 5)], lambda x: x.select(0, 2),
           layouts=T, dim=0, index=2)
    f.case("squeeze_all", "squeeze", lambda r: [r.randn(1, 3, 1, 7)], lambda x: x.squeeze())
    f.case("squeeze_dim", "squeeze_dim", lambda r: [r.randn(3, 1, 2)],
           lambda x: x.squeeze(1), dim=1)
    f.case("squeeze_dim_noop", "squeeze_dim", lambda r: [r.randn(3, 2)],
           lambda x: x.squeeze(-1), dim=-1)
    f.case("unsqueeze_front", "unsqueeze", lambda r: [r.randn(3, 7)],
           lambda x: x.unsqueeze(0), dim=0)
    f.case("unsqueeze_end", "unsqueeze", lambda r: [r.randn(3, 7)],
           lambda x: x.unsqueeze(-1), dim=-1)
    f.case("unsqueeze_0d", "unsqueeze", lambda r: [r.randn()], lambda x: x.unsqueeze(0), dim=0)
    f.case("flatten_all", "flatten", lambda r: [r.randn(2, 3, 4)], lambda x: x.flatten(),
           start_dim=0, end_dim=-1)
    f.case("flatten_mid", "flatten", lambda r: [r.randn(2, 3, 1, 4)],
           lambda x: x.flatten(1, 2), start_dim=1, end_dim=2)
    f.case("flatten_tposed", "flatten", lambda r: [r.randn(3, 4)], lambda x: x.flatten(),
           layouts=T, start_dim=0, end_dim=-1)
    f.case("unflatten_basic", "unflatten", lambda r: [r.randn(3, 12)],
           lambda x: x.unflatten(1, (2, -1, 3)), dim=1, sizes=[2, -1, 3])
    f.case("contiguous_tposed", "contiguous", lambda r: [r.randn(4, 3)],
           lambda x: x.contiguous(), layouts=T)
    f.case("clone_sliced", "clone", lambda r: [r.randn(7)], lambda x: x.clone(),
           layouts={0: "slice 0 2"})
    return f


def convert():
    f = Family("convert")
    f.case("to_f32_from_f64", "to", lambda r: [r.randn(3, 7)], lambda x: x.to(F32),
           dtype_out="float32")
    f.case("to_f64_from_f32", "to", lambda r: [r.randn(3, 7)], lambda x: x.to(F64), dtype=F32,
           dtype_out="float64")
    f.case("to_f64_tposed", "to", lambda r: [r.randn(4, 3)], lambda x: x.to(F64), dtype=F32,
           layouts={0: "transpose 0 1"}, dtype_out="float64")
    f.case("to_same_f64", "to", lambda r: [r.randn(5)], lambda x: x.to(F64, copy=True),
           dtype_out="float64")
    # Rounding to half types: ties to even, overflow to inf, subnormals, -0.
    # Deliberately absent: float64 values within ~2^-29 of a half-type tie (such as
    # 1 + 2^-11 + 2^-40). PyTorch 1.13 converts float64 -> float16/bfloat16 through float32,
    # rounding twice; tapegrad rounds once, straight from double (core/half.h), which is
    # the exactly rounded result. tests/core/half_test.cpp pins tapegrad's behaviour there.
    specials = [1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65519.0, 65520.0, -1e6, 1e-8, -3.0e-5,
                2.0**-24, 3.4e38, -0.0]

    def with_specials(r):
        return [torch.cat([torch.tensor(specials, dtype=F64), r.randn(20) * 100]).to(r.dtype)]

    for name, target in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        tname = "float16" if target == torch.float16 else "bfloat16"
        f.case(f"to_{name}_from_f64", "to", with_specials, lambda x, t=target: x.to(t),
               dtype_out=tname)
        f.case(f"to_{name}_from_f32", "to", with_specials, lambda x, t=target: x.to(t),
               dtype=F32, dtype_out=tname)
    # Forward only: float -> int64 truncates toward zero; float -> bool is x != 0.
    trunc = lambda r: [torch.tensor([-2.7, -1.0, -0.5, 0.0, 0.5, 1.99, 7.0, -7.5], dtype=r.dtype)]
    f.case("to_i64_from_f64", "to", trunc, lambda x: x.to(torch.int64), grad=False,
           dtype_out="int64")
    f.case("to_bool_from_f32", "to", trunc, lambda x: x.to(torch.bool), dtype=F32, grad=False,
           dtype_out="bool")
    f.case("to_f64_from_i64", "to", lambda r: [r.index(100, 7) - 50], lambda x: x.to(F64),
           dtype_out="float64")
    return f


def _torch_rms_norm(x, w, eps):
    """RMSNorm composed in PyTorch 1.13 (which has no F.rms_norm), in x's dtype."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _torch_add_rms_norm(x, residual, w, eps):
    h = x + residual
    return _torch_rms_norm(h, w, eps), h


def rms_norm():
    f = Family("rms_norm")
    eps = 1e-5
    # (name, x shape, layout of x or None, dtype, eps)
    for name, shape, layout, dtype, e in (
            ("row1", (1, 7), None, F64, eps),
            ("c7", (3, 7), None, F64, eps),
            ("c129", (4, 129), None, F64, eps),
            ("c1", (5, 1), None, F64, eps),
            ("vec", (7,), None, F64, eps),
            ("3d", (2, 3, 7), None, F64, eps),
            ("tposed", (4, 7), "transpose 0 1", F64, eps),
            ("sliced", (3, 7), "slice 1 2", F64, eps),
            ("big_eps", (2, 7), None, F64, 0.5),
            ("f32", (3, 129), None, F32, eps),
            ("f32_3d", (2, 1, 7), None, F32, eps)):
        layouts = {0: layout} if layout else None
        f.case(f"rms_norm_{name}", "rms_norm", lambda r, s=shape: [r.randn(*s), r.pos(s[-1])],
               lambda x, w, e=e: _torch_rms_norm(x, w, e), dtype=dtype, layouts=layouts, eps=e)
        f.case(f"add_rms_norm_{name}", "add_rms_norm",
               lambda r, s=shape: [r.randn(*s), r.randn(*s), r.pos(s[-1])],
               lambda x, res, w, e=e: _torch_add_rms_norm(x, res, w, e), dtype=dtype,
               layouts=layouts, eps=e)
    return f


def linear():
    f = Family("linear")
    fn = torch.nn.functional.linear
    f.case("linear_basic", "linear", lambda r: [r.randn(4, 3), r.randn(5, 3), r.randn(5)], fn)
    f.case("linear_ones", "linear", lambda r: [r.randn(1, 1), r.randn(1, 1), r.randn(1)], fn)
    f.case("linear_odd", "linear", lambda r: [r.randn(3, 129), r.randn(7, 129), r.randn(7)], fn)
    f.case("linear_3d", "linear", lambda r: [r.randn(2, 7, 5), r.randn(3, 5), r.randn(3)], fn)
    f.case("linear_nobias", "linear", lambda r: [r.randn(2, 3, 7), r.randn(4, 7)], fn)
    f.case("linear_1d", "linear", lambda r: [r.randn(7), r.randn(3, 7), r.randn(3)], fn)
    f.case("linear_out1", "linear", lambda r: [r.randn(7, 5), r.randn(1, 5), r.randn(1)], fn)
    f.case("linear_tposed", "linear", lambda r: [r.randn(4, 3), r.randn(5, 3), r.randn(5)], fn,
           layouts={0: "transpose 0 1", 1: "transpose 0 1"})
    f.case("linear_sliced", "linear", lambda r: [r.randn(2, 3, 5), r.randn(4, 5), r.randn(4)],
           fn, layouts={0: "slice 1 2", 1: "slice 0 2", 2: "slice 0 3"})
    f.case("linear_tposed_nobias", "linear", lambda r: [r.randn(3, 7, 2), r.randn(7, 2)], fn,
           layouts={0: "transpose 0 2", 1: "transpose 0 1"})
    f.case("linear_f32", "linear", lambda r: [r.randn(5, 129), r.randn(7, 129), r.randn(7)], fn,
           dtype=F32)
    f.case("linear_f32_3d", "linear", lambda r: [r.randn(2, 7, 3), r.randn(4, 3)], fn,
           dtype=F32, layouts={1: "transpose 0 1"})
    return f


def mse_loss():
    f = Family("mse_loss")
    mse = torch.nn.functional.mse_loss
    for red in ("mean", "sum", "none"):
        fn = lambda x, t, red=red: mse(x, t, reduction=red)
        f.case(f"mse_{red}_basic", "mse_loss", lambda r: [r.randn(3, 4), r.randn(3, 4)], fn,
               reduction=red)
        f.case(f"mse_{red}_ones", "mse_loss", lambda r: [r.randn(1), r.randn(1)], fn,
               reduction=red)
        f.case(f"mse_{red}_0d", "mse_loss", lambda r: [r.randn(), r.randn()], fn, reduction=red)
        f.case(f"mse_{red}_3d", "mse_loss", lambda r: [r.randn(2, 1, 7), r.randn(2, 1, 7)], fn,
               reduction=red)
        f.case(f"mse_{red}_odd", "mse_loss", lambda r: [r.randn(129), r.randn(129)], fn,
               reduction=red)
        f.case(f"mse_{red}_tposed", "mse_loss", lambda r: [r.randn(4, 3), r.randn(4, 3)], fn,
               layouts={0: "transpose 0 1", 1: "transpose 0 1"}, reduction=red)
        f.case(f"mse_{red}_sliced", "mse_loss", lambda r: [r.randn(3, 7), r.randn(3, 7)], fn,
               layouts={0: "slice 1 2", 1: "slice 0 3"}, reduction=red)
        f.case(f"mse_{red}_f32", "mse_loss", lambda r: [r.randn(7, 5), r.randn(7, 5)], fn,
               dtype=F32, reduction=red)
    return f


def activation():
    f = Family("activation")
    F = torch.nn.functional
    unary = {
        "relu": torch.relu,
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "silu": F.silu,
    }
    for op, fn in unary.items():
        f.case(f"{op}_one", op, lambda r: [r.randn(1)], fn)
        f.case(f"{op}_odd", op, lambda r: [r.randn(129)], fn)
        f.case(f"{op}_tposed", op, lambda r: [r.randn(4, 7)], fn, layouts={0: "transpose 0 1"})
        f.case(f"{op}_sliced", op, lambda r: [r.randn(3, 7)], fn, layouts={0: "slice 1 2"})
        f.case(f"{op}_f32", op, lambda r: [r.randn(7, 3)], fn, dtype=F32)
    for approximate in (False, True):
        tag = "tanh" if approximate else "exact"
        fn = lambda x, a=approximate: F.gelu(x, approximate="tanh" if a else "none")
        f.case(f"gelu_{tag}_one", "gelu", lambda r: [r.randn(1)], fn, approximate=approximate)
        f.case(f"gelu_{tag}_odd", "gelu", lambda r: [r.randn(1, 129)], fn,
               approximate=approximate)
        f.case(f"gelu_{tag}_tposed", "gelu", lambda r: [r.randn(2, 7, 3)], fn,
               layouts={0: "transpose 1 2"}, approximate=approximate)
        f.case(f"gelu_{tag}_f32", "gelu", lambda r: [r.randn(7, 7)], fn, dtype=F32,
               approximate=approximate)
    swiglu = lambda a, b: F.silu(a) * b
    f.case("swiglu_one", "swiglu", lambda r: [r.randn(1), r.randn(1)], swiglu)
    f.case("swiglu_odd", "swiglu", lambda r: [r.randn(129), r.randn(129)], swiglu)
    f.case("swiglu_tposed", "swiglu", lambda r: [r.randn(4, 7), r.randn(4, 7)], swiglu,
           layouts={0: "transpose 0 1", 1: "slice 0 2"})
    f.case("swiglu_f32", "swiglu", lambda r: [r.randn(3, 7), r.randn(3, 7)], swiglu,
           dtype=F32)

    def silu_and_mul(x):
        a, b = x.chunk(2, dim=-1)
        return F.silu(a) * b

    f.case("silu_and_mul_one", "silu_and_mul", lambda r: [r.randn(2)], silu_and_mul)
    f.case("silu_and_mul_odd", "silu_and_mul", lambda r: [r.randn(129, 2)], silu_and_mul)
    f.case("silu_and_mul_3d", "silu_and_mul", lambda r: [r.randn(2, 1, 258)], silu_and_mul)
    f.case("silu_and_mul_tposed", "silu_and_mul", lambda r: [r.randn(7, 6)], silu_and_mul,
           layouts={0: "transpose 0 1"})
    f.case("silu_and_mul_sliced", "silu_and_mul", lambda r: [r.randn(3, 8)], silu_and_mul,
           layouts={0: "slice 1 2"})
    f.case("silu_and_mul_f32", "silu_and_mul", lambda r: [r.randn(7, 10)], silu_and_mul,
           dtype=F32)
    return f

def in_float32(fn):
    """fn computed the way tapegrad computes float16/bfloat16: every floating-point input
    widened to float32, fn run in float32, each floating-point output rounded once back to
    the first input's dtype. (Debian's PyTorch 1.13 has no CPU float16 kernels for most ops,
    and where it has them it may round intermediates; this is the contract tapegrad states.)
    Autograd goes through the casts, so the stored gradients are float32 results rounded
    once to the input dtype too."""
    def wrapped(*inputs):
        dtype = inputs[0].dtype
        widened = [x.to(F32) if x.is_floating_point() else x for x in inputs]
        result = fn(*widened)
        if isinstance(result, (tuple, list)):
            return tuple(o.to(dtype) if o.is_floating_point() else o for o in result)
        return result.to(dtype)
    return wrapped


# ---- families of the issue-4 ops (one function each, written by different hands) ----

def softmax():
    f = Family("softmax")
    ops = {"softmax": torch.softmax, "log_softmax": torch.log_softmax}
    for op, fn in ops.items():
        # (name, shape, dim, layout of x or None, dtype, scale of the values)
        for name, shape, dim, layout, dtype, scale in (
                ("one", (1,), 0, None, F64, 1),
                ("c7", (3, 7), -1, None, F64, 1),
                ("c129", (2, 129), 1, None, F64, 1),
                ("dim0", (7, 3), 0, None, F64, 1),
                ("mid", (2, 5, 3), 1, None, F64, 1),
                ("0d", (), 0, None, F64, 1),
                ("size1", (4, 1), -1, None, F64, 1),
                ("tposed", (4, 7), -1, "transpose 0 1", F64, 1),
                ("tposed_dim0", (5, 3), 0, "transpose 0 1", F64, 1),
                ("sliced", (3, 7), 1, "slice 1 2", F64, 1),
                ("large", (3, 7), -1, None, F64, 1000),
                ("f32", (3, 129), -1, None, F32, 1),
                ("f32_dim0", (7, 2, 3), 0, None, F32, 1),
                ("f32_large", (2, 7), 1, None, F32, 1000),
                ("f16", (3, 129), -1, None, torch.float16, 4),
                ("f16_dim0", (7, 5), 0, "transpose 0 1", torch.float16, 4),
                ("bf16", (3, 129), -1, None, torch.bfloat16, 4),
                ("bf16_mid", (2, 7, 3), 1, None, torch.bfloat16, 4)):
            half = dtype in (torch.float16, torch.bfloat16)
            call = lambda x, d=dim, fn=fn: fn(x, d)
            f.case(f"{op}_{name}", op, lambda r, s=shape, k=scale: [r.randn(*s) * k],
                   in_float32(call) if half else call, dtype=dtype,
                   layouts={0: layout} if layout else None, dim=dim)
    return f


def _torch_cross_entropy(logits, targets, ignore_index, reduction, label_smoothing):
    """tapegrad's class-last cross_entropy in PyTorch terms: rows of C, then reshaped back."""
    C = logits.shape[-1]
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, C), targets.reshape(-1), ignore_index=ignore_index,
        reduction=reduction, label_smoothing=label_smoothing)
    return loss.reshape(targets.shape) if reduction == "none" else loss


def cross_entropy():
    f = Family("cross_entropy")

    def targets(r, shape, C, ignore_every=0, ignore_index=-100):
        t = r.index(C, *shape)
        if ignore_every:
            flat = t.reshape(-1)
            flat[1::ignore_every] = ignore_index
        return t

    # (name, logits shape, ignore every k-th target (0: none), ignore_index, label_smoothing,
    #  layout of the logits, dtype, scale of the logits)
    for name, shape, every, ignore, smooth, layout, dtype, scale in (
            ("one", (1, 7), 0, -100, 0.0, None, F64, 1),
            ("c7", (5, 7), 0, -100, 0.0, None, F64, 1),
            ("c129", (4, 129), 0, -100, 0.0, None, F64, 1),
            ("c1", (3, 1), 0, -100, 0.0, None, F64, 1),
            ("vec", (7,), 0, -100, 0.0, None, F64, 1),
            ("3d", (2, 3, 7), 0, -100, 0.0, None, F64, 1),
            ("ignore", (6, 5), 2, -100, 0.0, None, F64, 1),
            ("ignore_class", (7, 4), 3, 2, 0.0, None, F64, 1),
            ("smooth", (5, 7), 0, -100, 0.1, None, F64, 1),
            ("smooth_ignore", (2, 4, 7), 3, -100, 0.25, None, F64, 1),
            ("smooth_all", (3, 5), 0, -100, 1.0, None, F64, 1),
            ("tposed", (4, 7), 2, -100, 0.1, "transpose 0 1", F64, 1),
            ("sliced", (3, 7), 0, -100, 0.0, "slice 1 2", F64, 1),
            ("large", (4, 7), 0, -100, 0.1, None, F64, 1000),
            ("f32", (5, 129), 2, -100, 0.0, None, F32, 1),
            ("f32_smooth", (2, 3, 7), 0, -100, 0.2, None, F32, 1),
            ("f32_large", (4, 7), 0, -100, 0.0, None, F32, 1000),
            ("f16", (5, 129), 2, -100, 0.1, None, torch.float16, 4),
            ("bf16", (2, 3, 7), 0, -100, 0.0, None, torch.bfloat16, 4)):
        for red in ("mean", "sum", "none"):
            half = dtype in (torch.float16, torch.bfloat16)
            call = lambda x, t, i=ignore, red=red, e=smooth: _torch_cross_entropy(x, t, i, red, e)
            f.case(f"cross_entropy_{name}_{red}", "cross_entropy",
                   lambda r, s=shape, k=scale, n=every, i=ignore:
                       [r.randn(*s) * k, targets(r, s[:-1], s[-1], n, i)],
                   in_float32(call) if half else call, dtype=dtype,
                   layouts={0: layout} if layout else None, ignore_index=ignore,
                   reduction=red, label_smoothing=smooth)
    return f


def embedding():
    f = Family("embedding")
    F = torch.nn.functional
    ix = lambda values: torch.tensor(values, dtype=torch.int64)
    # Inputs are [ids, table]; padding_idx None is stored as null. Repeated ids make the
    # backward accumulate several gradient rows into one table row.
    for name, make, layouts, dtype, pad in (
            ("repeats", lambda r: [ix([4, 0, 4, 2, 4]), r.randn(7, 3)], None, F64, None),
            ("2d", lambda r: [r.index(11, 2, 3), r.randn(11, 5)], None, F64, None),
            ("3d_odd", lambda r: [r.index(7, 2, 3, 4), r.randn(7, 129)], None, F64, None),
            ("0d", lambda r: [torch.tensor(2), r.randn(3, 4)], None, F64, None),
            ("one", lambda r: [ix([0, 0]), r.randn(1, 1)], None, F64, None),
            ("pad", lambda r: [ix([[0, 1, 0], [2, 0, 3]]), r.randn(4, 3)], None, F64, 0),
            ("pad_neg", lambda r: [ix([3, 1, 3, 2]), r.randn(4, 2)], None, F64, -1),
            ("pad_unused", lambda r: [ix([0, 1, 1]), r.randn(5, 2)], None, F64, 4),
            ("table_tposed", lambda r: [r.index(5, 6), r.randn(5, 7)],
             {1: "transpose 0 1"}, F64, None),
            ("table_sliced", lambda r: [r.index(4, 3, 2), r.randn(4, 3)],
             {1: "slice 1 2"}, F64, 1),
            ("ids_tposed", lambda r: [r.index(6, 3, 4), r.randn(6, 3)],
             {0: "transpose 0 1"}, F64, None),
            ("f32", lambda r: [r.index(129, 7), r.randn(129, 7)], None, F32, None),
            ("f32_pad", lambda r: [r.index(5, 2, 7), r.randn(5, 3)], None, F32, 2)):
        f.case(f"embedding_{name}", "embedding", make,
               lambda i, t, p=pad: F.embedding(i, t, padding_idx=p), dtype=dtype,
               layouts=layouts, padding_idx=pad)
    # float16/bfloat16: the forward is an exact copy; the backward sums in float32 and rounds
    # once (in_float32 widens its first input, so it is called with the table first).
    for tag, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for name, make, pad in (
                ("", lambda r: [r.index(7, 3, 5), r.randn(7, 4)], None),
                ("_pad", lambda r: [r.index(4, 9), r.randn(4, 129)], 3)):
            half = in_float32(lambda t, i, p=pad: F.embedding(i, t, padding_idx=p))
            f.case(f"embedding_{tag}{name}", "embedding", make,
                   lambda i, t, h=half: h(t, i), dtype=dtype, padding_idx=pad)
    return f


def layer_norm():
    f = Family("layer_norm")
    F = torch.nn.functional

    def make(shape, weight, bias, scale=1.0):
        def inputs(r):
            return ([r.randn(*shape) * scale + 0.5] + ([r.pos(shape[-1])] if weight else [])
                    + ([r.randn(shape[-1])] if bias else []))
        return inputs

    def ln(weight, bias, eps):
        def fn(x, *params):
            p = list(params)
            w = p.pop(0) if weight else None
            b = p.pop(0) if bias else None
            return F.layer_norm(x, (x.shape[-1],), w, b, eps)
        return fn

    eps = 1e-5
    # (name, x shape, layout of x or None, dtype, weight?, bias?, eps)
    for name, shape, layout, dtype, w, b, e in (
            ("row1", (1, 7), None, F64, True, True, eps),
            ("c7", (3, 7), None, F64, True, True, eps),
            ("c129", (4, 129), None, F64, True, True, eps),
            ("c1", (5, 1), None, F64, True, True, eps),
            ("vec", (7,), None, F64, True, True, eps),
            ("3d", (2, 3, 7), None, F64, True, True, eps),
            ("plain", (3, 7), None, F64, False, False, eps),
            ("weight_only", (3, 7), None, F64, True, False, eps),
            ("bias_only", (3, 7), None, F64, False, True, eps),
            ("tposed", (4, 7), "transpose 0 1", F64, True, True, eps),
            ("sliced", (3, 7), "slice 1 2", F64, True, False, eps),
            ("big_eps", (2, 7), None, F64, True, True, 0.5),
            ("f32", (3, 129), None, F32, True, True, eps),
            ("f32_3d", (2, 1, 7), None, F32, False, True, eps)):
        f.case(f"layer_norm_{name}", "layer_norm", make(shape, w, b), ln(w, b, e), dtype=dtype,
               layouts={0: layout} if layout else None, weight=w, bias=b, eps=e)
    for tag, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        f.case(f"layer_norm_{tag}", "layer_norm", make((3, 129), True, True),
               in_float32(ln(True, True, eps)), dtype=dtype, weight=True, bias=True, eps=eps)
        # Deviations whose squares overflow float16 (300^2 > 65504): float32 compute is the point.
        f.case(f"layer_norm_{tag}_large", "layer_norm", make((2, 7), True, False, scale=300.0),
               in_float32(ln(True, False, eps)), dtype=dtype, layouts={0: "transpose 0 1"},
               weight=True, bias=False, eps=eps)
    return f


def dropout():
    # PyTorch draws its dropout mask from its own generator (mt19937 / Philox with another
    # layout), tapegrad from its Philox4x32-10 stream: the same seed gives different masks, so
    # only the deterministic cases can be pinned here: eval mode (identity), p = 0 (identity)
    # and p = 1 (all zeros), with their gradients. The random mask is tested in C++
    # (tests/ops/dropout_test.cpp: seeds, statistics, same mask forward and backward).
    f = Family("dropout")
    F = torch.nn.functional
    for name, shape, layouts, dtype, p, training in (
            ("eval", (3, 7), None, F64, 0.5, False),
            ("eval_tposed", (4, 7), {0: "transpose 0 1"}, F64, 0.3, False),
            ("p0_train", (2, 3, 5), None, F64, 0.0, True),
            ("p0_sliced", (3, 7), {0: "slice 1 2"}, F64, 0.0, True),
            ("p1_train", (129,), None, F64, 1.0, True),
            ("p1_tposed", (5, 3), {0: "transpose 0 1"}, F64, 1.0, True),
            ("p1_eval", (1,), None, F64, 1.0, False),
            ("eval_f32", (7, 3), None, F32, 0.5, False),
            ("p1_f32", (2, 7), None, F32, 1.0, True),
            ("p1_f16", (3, 5), None, torch.float16, 1.0, True),
            ("eval_bf16", (3, 5), None, torch.bfloat16, 0.5, False)):
        f.case(f"dropout_{name}", "dropout", lambda r, s=shape: [r.randn(*s)],
               lambda x, p=p, t=training: F.dropout(x, p, t), dtype=dtype, layouts=layouts,
               p=p, training=training)
    return f


def _torch_rope(x, positions, theta):
    """Rotate-half RoPE composed from PyTorch primitives: pairs (i, i + D/2) rotated by
    positions * theta^(-2i/D), the angles in float64, cos/sin rounded once to x's dtype."""
    d = x.shape[-1]
    inv_freq = theta ** (-torch.arange(0, d, 2, dtype=F64) / d)
    angles = positions.to(F64).unsqueeze(-1) * inv_freq  # (..., T, D/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def rope():
    f = Family("rope")

    def make(shape, pos_shape, high):
        return lambda r: [r.randn(*shape), r.index(high, *pos_shape)]

    # (name, x shape, positions shape, largest position + 1, layout of x or None, dtype, theta)
    for name, shape, pos_shape, high, layout, dtype, theta in (
            ("d2", (3, 2), (3,), 8, None, F64, 10000.0),
            ("t1", (1, 8), (1,), 8, None, F64, 10000.0),
            ("bhtd", (2, 3, 7, 16), (7,), 4096, None, F64, 10000.0),
            ("d130", (5, 130), (5,), 4096, None, F64, 10000.0),
            ("per_seq", (2, 3, 5, 8), (2, 1, 5), 2048, None, F64, 10000.0),
            ("theta10", (4, 6), (4,), 100, None, F64, 10.0),
            ("tposed", (6, 4), (6,), 50, "transpose 0 1", F64, 10000.0),
            ("sliced", (3, 8), (3,), 50, "slice 1 2", F64, 500000.0),
            ("f32", (2, 7, 64), (7,), 8192, None, F32, 10000.0),
            ("f32_tposed", (4, 2, 8), (2,), 8192, "transpose 0 1", F32, 10000.0)):
        f.case(f"rope_{name}", "rope", make(shape, pos_shape, high),
               lambda x, p, t=theta: _torch_rope(x, p, t), dtype=dtype,
               layouts={0: layout} if layout else None, theta=theta)
    for tag, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        f.case(f"rope_{tag}", "rope", make((2, 5, 32), (5,), 4096),
               in_float32(lambda x, p: _torch_rope(x, p, 10000.0)), dtype=dtype, theta=10000.0)
    return f


def _torch_attention(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T * scale + mask) v, composed (PyTorch 1.13 has no
    F.scaled_dot_product_attention); causal = a top-left torch.ones(Tq, Tk).tril() bool mask."""
    scale = scale if scale is not None else 1.0 / q.shape[-1] ** 0.5
    s = q @ k.transpose(-2, -1) * scale
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    if mask is not None and mask.dtype == torch.bool:
        s = s.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        s = s + mask
    return torch.softmax(s, dim=-1) @ v


def attention():
    f = Family("attention")
    op = "scaled_dot_product_attention"

    def qkv(b, h, tq, tk, d, dv):
        return lambda r: [r.randn(b, h, tq, d), r.randn(b, h, tk, d), r.randn(b, h, tk, dv)]

    def keep(r, *shape):
        """A random bool mask in which every query keeps at least its diagonal key."""
        m = r.mask(*shape)
        tq, tk = shape[-2], shape[-1]
        for i in range(tq):
            m[..., i, i % tk] = True
        return m

    plain = lambda q, k, v: _torch_attention(q, k, v)
    causal = lambda q, k, v: _torch_attention(q, k, v, causal=True)
    masked = lambda q, k, v, m: _torch_attention(q, k, v, m)
    for name, dims, fn, is_causal, layouts, dtype in (
        ("basic", (2, 3, 4, 4, 5, 5), plain, False, None, F64),
        ("ones", (1, 1, 1, 1, 1, 1), plain, False, None, F64),
        ("cross", (2, 2, 3, 7, 4, 2), plain, False, None, F64),
        ("long", (1, 1, 7, 129, 4, 3), plain, False, None, F64),
        ("causal", (1, 2, 7, 7, 3, 5), causal, True, None, F64),
        ("causal_wide", (2, 1, 3, 5, 2, 3), causal, True, None, F64),
        ("causal_tall", (2, 1, 5, 3, 2, 3), causal, True, None, F64),
        ("heads_tposed", (2, 3, 5, 5, 4, 4), causal, True,
         {0: "transpose 1 2", 1: "transpose 1 2", 2: "transpose 1 2"}, F64),
        ("sliced", (1, 2, 4, 6, 3, 2), plain, False, {1: "slice 3 2"}, F64),
        ("basic_f32", (2, 2, 7, 7, 8, 8), plain, False, None, F32),
        ("causal_f32", (1, 3, 7, 7, 4, 4), causal, True, None, F32),
    ):
        f.case(f"attention_{name}", op, qkv(*dims), fn, dtype=dtype, layouts=layouts,
               causal=is_causal, scale=None)
    f.case("attention_scale", op, qkv(1, 2, 3, 4, 5, 2),
           lambda q, k, v: _torch_attention(q, k, v, scale=0.3), causal=False, scale=0.3)
    # Bool masks (true = may attend), broadcast from (Tq, Tk) and (B, 1, Tq, Tk).
    f.case("attention_bool_2d", op, lambda r: qkv(2, 3, 5, 7, 4, 3)(r) + [keep(r, 5, 7)],
           masked, causal=False, scale=None)
    f.case("attention_bool_4d", op, lambda r: qkv(2, 2, 4, 6, 3, 3)(r) + [keep(r, 2, 1, 4, 6)],
           masked, causal=False, scale=None)
    f.case("attention_bool_f32", op, lambda r: qkv(1, 2, 7, 7, 4, 4)(r) + [keep(r, 7, 7)],
           masked, dtype=F32, causal=False, scale=None)
    # Float masks are added to the scores and get a gradient (summed over broadcast dims).
    f.case("attention_float_2d", op, lambda r: qkv(2, 2, 4, 5, 3, 2)(r) + [r.randn(4, 5)],
           masked, causal=False, scale=None)
    f.case("attention_float_pad", op, lambda r: qkv(2, 3, 4, 6, 3, 3)(r) + [r.randn(2, 1, 1, 6)],
           masked, causal=False, scale=None)

    def with_neg_inf(r):
        m = r.randn(5, 5)
        m[torch.ones(5, 5, dtype=torch.bool).triu(1)] = float("-inf")
        return qkv(1, 2, 5, 5, 3, 4)(r) + [m]

    f.case("attention_float_neginf", op, with_neg_inf, masked, causal=False, scale=None)
    f.case("attention_float_tposed", op, lambda r: qkv(1, 2, 3, 4, 2, 2)(r) + [r.randn(3, 4)],
           masked, layouts={3: "transpose 0 1", 0: "transpose 1 2"}, causal=False, scale=None)
    f.case("attention_float_f32", op, lambda r: qkv(2, 1, 7, 5, 4, 3)(r) + [r.randn(7, 5)],
           masked, dtype=F32, causal=False, scale=None)
    # Grouped-query attention (PyTorch 2.5's enable_gqa): k and v with Hkv heads serve
    # H / Hkv query heads each, as if repeated with repeat_interleave along the heads.
    def gqa(b, h, hkv, tq, tk, d, dv):
        return lambda r: [r.randn(b, h, tq, d), r.randn(b, hkv, tk, d), r.randn(b, hkv, tk, dv)]

    def repeated(fn):
        return lambda q, k, v, *m: fn(q, k.repeat_interleave(q.shape[1] // k.shape[1], 1),
                                      v.repeat_interleave(q.shape[1] // v.shape[1], 1), *m)

    for name, dims, fn, is_causal, dtype in (
        ("gqa_causal", (2, 4, 2, 5, 5, 3, 4), causal, True, F64),
        ("gqa_mqa", (1, 3, 1, 4, 6, 2, 3), plain, False, F64),
        ("gqa_f32", (1, 6, 2, 7, 7, 4, 4), causal, True, F32),
    ):
        f.case(f"attention_{name}", op, gqa(*dims), repeated(fn), dtype=dtype, causal=is_causal,
               scale=None, enable_gqa=True)
    f.case("attention_gqa_float_mask", op,
           lambda r: gqa(1, 4, 2, 3, 5, 2, 2)(r) + [r.randn(1, 4, 3, 5)], repeated(masked),
           causal=False, scale=None, enable_gqa=True)
    return f


def _half_add_rms_norm(x, residual, w, eps=1e-5):
    """add_rms_norm's half contract: h = x + residual rounded to the half dtype (the residual
    stream is stored in the model's dtype), normalised in float32, and in backward the two
    gradients reaching h summed in float32 and rounded once. The rounding of h is applied as
    a forward-only correction so that autograd does not round that sum twice."""
    dtype = x.dtype
    x32, r32, w32 = x.to(F32), residual.to(F32), w.to(F32)
    h = x32 + r32
    h = h + (h.to(dtype).to(F32) - h).detach()
    return _torch_rms_norm(h, w32, eps).to(dtype), h.to(dtype)


def _weight_after_rounding_rms_norm(x, w, eps=1e-5):
    """Hugging Face's LlamaRMSNorm order for a half input: normalise in float32, round the
    normalised value to the input dtype, then multiply by the weight in that dtype (PyTorch's
    own half multiplication, whose backward rounds each product before the weight's gradient
    sums them over rows). tapegrad's rms_norm rounds once, after the weight."""
    x32 = x.to(F32)
    normalised = _torch_rms_norm(x32, torch.ones(x.shape[-1], dtype=F32), eps).to(x.dtype)
    return normalised * w


def half():
    """float16/bfloat16 inputs of the ops that take them (computed in float32)."""
    f = Family("half")
    F = torch.nn.functional
    halves = (("f16", torch.float16), ("bf16", torch.bfloat16))

    def silu_and_mul(x):
        a, b = x.chunk(2, dim=-1)
        return F.silu(a) * b

    for tag, dtype in halves:
        f.case(f"linear_{tag}", "linear", lambda r: [r.randn(5, 129), r.randn(7, 129), r.randn(7)],
               in_float32(F.linear), dtype=dtype)
        f.case(f"linear_{tag}_tposed", "linear", lambda r: [r.randn(2, 7, 3), r.randn(4, 3)],
               in_float32(F.linear), dtype=dtype, layouts={0: "transpose 0 2"})
        f.case(f"rms_norm_{tag}", "rms_norm", lambda r: [r.randn(3, 129), r.pos(129)],
               in_float32(lambda x, w: _torch_rms_norm(x, w, 1e-5)), dtype=dtype, eps=1e-5)
        # Values whose squares overflow float16 (300^2 > 65504): computing in float32 is the point.
        f.case(f"rms_norm_{tag}_large", "rms_norm", lambda r: [r.randn(2, 7) * 300, r.pos(7)],
               in_float32(lambda x, w: _torch_rms_norm(x, w, 1e-5)), dtype=dtype, eps=1e-5)
        # The other order (docs/course/06-rms-norm.md, "Pitfalls"): tapegrad's composition
        # mul(rms_norm(x, ones), w) computes it; RmsNormTest.HalfRoundingOrder compares the two.
        f.case(f"rms_norm_weight_after_rounding_{tag}", "rms_norm_weight_after_rounding",
               lambda r: [r.randn(3, 129), r.pos(129)], _weight_after_rounding_rms_norm,
               dtype=dtype, eps=1e-5)
        f.case(f"add_rms_norm_{tag}", "add_rms_norm",
               lambda r: [r.randn(2, 3, 7), r.randn(2, 3, 7), r.pos(7)],
               _half_add_rms_norm, dtype=dtype, layouts={1: "transpose 0 1"}, eps=1e-5)
        f.case(f"silu_{tag}", "silu", lambda r: [r.randn(7, 129) * 4], in_float32(F.silu),
               dtype=dtype)
        f.case(f"swiglu_{tag}", "swiglu", lambda r: [r.randn(3, 7), r.randn(3, 7)],
               in_float32(lambda a, b: F.silu(a) * b), dtype=dtype,
               layouts={0: "transpose 0 1"})
        f.case(f"silu_and_mul_{tag}", "silu_and_mul", lambda r: [r.randn(5, 14)],
               in_float32(silu_and_mul), dtype=dtype)
        f.case(f"mse_loss_{tag}", "mse_loss", lambda r: [r.randn(7, 3), r.randn(7, 3)],
               in_float32(lambda x, t: F.mse_loss(x, t)), dtype=dtype, reduction="mean")
    return f


def autocast():
    """Each op under torch.autocast("cpu", dtype=torch.bfloat16), float32 inputs unless the
    case says otherwise. The C++ side runs the op under tg::AutocastGuard and must return the
    dtype PyTorch's autocast returned (the rule, core/autocast.h), with the values and the
    float32 inputs' gradients (which flow back through the casts).

    The dtypes come from torch.autocast itself. The values are computed the way tapegrad
    states it computes them (as in_float32 does for the half family): the inputs cast as the
    rule says (`cast`), then the op in float32 on those values, the output rounded once to
    the dtype autocast returned. Debian's PyTorch 1.13 bfloat16 kernels round intermediates
    to bfloat16 (its bfloat16 matmul is off by several units where a float32 sum rounded once
    is off by at most one), so its values are not the reference; its dtypes are."""
    f = Family("autocast")
    F = torch.nn.functional
    BF = torch.bfloat16

    def under_autocast(fn, cast):
        def wrapped(*inputs):
            with torch.autocast("cpu", dtype=BF):
                out_dtype = fn(*[x.detach() for x in inputs]).dtype
            floating = [x.dtype for x in inputs if x.is_floating_point()]
            target = {"low": BF, "float32": F32, "none": None}.get(cast)
            if cast == "promote":
                target = functools.reduce(torch.promote_types, floating)
            cast_in = [x.to(target) if target is not None and x.is_floating_point() else x
                       for x in inputs]
            return fn(*[x.to(F32) if x.is_floating_point() else x for x in cast_in]).to(out_dtype)
        return wrapped

    def case(name, op, cast, make, fn, **params):
        f.case(name, op, make, under_autocast(fn, cast), dtype=F32, autocast="bfloat16", **params)

    # kLowPrecision: the products run in bfloat16 (the float32 weight's gradient is float32)
    case("linear", "linear", "low", lambda r: [r.randn(5, 24), r.randn(7, 24), r.randn(7)],
         F.linear)
    case("linear_3d", "linear", "low", lambda r: [r.randn(2, 3, 16), r.randn(4, 16)], F.linear)
    case("matmul", "matmul", "low", lambda r: [r.randn(2, 5, 16), r.randn(16, 3)], torch.matmul)
    # PyTorch 1.13 has no scaled_dot_product_attention (PyTorch 2's autocast lists it as a
    # lower-precision op); its composition from matmul and softmax gives the same dtype.
    case("attention", "scaled_dot_product_attention", "low",
         lambda r: [r.randn(1, 2, 5, 8), r.randn(1, 2, 5, 8), r.randn(1, 2, 5, 8)],
         lambda q, k, v: _torch_attention(q, k, v, causal=True), causal=True, scale=None)
    # kInFloat32: the losses take bfloat16 logits and return float32
    case("cross_entropy", "cross_entropy", "float32",
         lambda r: [(r.randn(6, 11) * 3).to(BF), r.index(11, 6)],
         lambda x, t: F.cross_entropy(x, t), ignore_index=-100, reduction="mean",
         label_smoothing=0.0)
    case("mse_loss", "mse_loss", "float32", lambda r: [r.randn(4, 5).to(BF), r.randn(4, 5)],
         lambda x, t: F.mse_loss(x, t), reduction="mean")
    # kPromote: mixed float32/bfloat16 inputs meet at float32
    for op, fn in (("add", torch.add), ("sub", torch.sub), ("mul", torch.mul),
                   ("div", torch.div)):
        make = (lambda r: [r.randn(3, 4), r.pos(3, 4).to(BF)]) if op == "div" else (
            lambda r: [r.randn(3, 4), r.randn(3, 4).to(BF)])
        case(f"{op}_mixed", op, "promote", make, fn)
    case("cat_mixed", "cat", "promote", lambda r: [r.randn(2, 3).to(BF), r.randn(1, 3)],
         lambda *xs: torch.cat(xs, 0), dim=0)
    case("stack_mixed", "stack", "promote", lambda r: [r.randn(2, 3), r.randn(2, 3).to(BF)],
         lambda *xs: torch.stack(xs, 1), dim=1)
    case("where_mixed", "where", "promote",
         lambda r: [r.mask(3, 4), r.randn(3, 4).to(BF), r.randn(3, 4)], torch.where)
    # no rule: bfloat16 in, bfloat16 out (computed in float32 inside), float32 stays float32
    case("softmax_bf16", "softmax", "none", lambda r: [r.randn(3, 9).to(BF) * 4],
         lambda x: F.softmax(x, -1), dim=-1)
    case("log_softmax_bf16", "log_softmax", "none", lambda r: [r.randn(3, 9).to(BF) * 4],
         lambda x: F.log_softmax(x, -1), dim=-1)
    case("layer_norm_bf16", "layer_norm", "none", lambda r: [r.randn(3, 16).to(BF)],
         lambda x: F.layer_norm(x, (16,)), weight=False, bias=False, eps=1e-5)
    case("sum_bf16", "sum", "none", lambda r: [r.randn(4, 6).to(BF)],
         lambda x: torch.sum(x, (1,)), dims=[1], keepdim=False)
    case("relu_f32", "relu", "none", lambda r: [r.randn(3, 4)], F.relu)
    case("softmax_f32", "softmax", "none", lambda r: [r.randn(3, 9)], lambda x: F.softmax(x, -1),
         dim=-1)
    return f


# ---- optimizers and gradient clipping (nn/optim.h, nn/grad_utils.h) ----

def _forward_only_case(f, name, op, inputs, outputs, **params):
    """A case with stored inputs and outputs only (no upstream gradient, no input grads):
    optimizer steps and clipping are not differentiable ops."""
    assert "." not in name and f"{name}.op" not in f.metadata, name
    for i, x in enumerate(inputs):
        f.tensors[f"{name}.in{i}"] = x.detach().contiguous().clone()
    for k, o in enumerate(outputs):
        f.tensors[f"{name}.out{k}"] = o.detach().contiguous().clone()
    f.metadata[f"{name}.op"] = op
    for key, value in params.items():
        f.metadata[f"{name}.{key}"] = json.dumps(value)


def optim():
    """10 optimizer steps: in0 = the parameter, in1 = the 10 gradients stacked; out0 = the
    parameter after the steps, out1... = the state (momentum_buffer, or exp_avg and
    exp_avg_sq). And clip_grad_norm_: in0..in2 = gradients of three parameters; out0 = the
    total norm (in the gradients' dtype), out1..out3 = the clipped gradients."""
    f = Family("optim")
    steps = 10
    sgd = {
        "sgd_plain": dict(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False),
        "sgd_momentum": dict(lr=0.05, momentum=0.9, dampening=0.0, weight_decay=0.0,
                             nesterov=False),
        "sgd_nesterov": dict(lr=0.05, momentum=0.9, dampening=0.0, weight_decay=0.0,
                             nesterov=True),
        "sgd_wd": dict(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.01, nesterov=False),
        "sgd_dampening": dict(lr=0.2, momentum=0.8, dampening=0.5, weight_decay=1e-3,
                              nesterov=False),
        "sgd_nesterov_wd": dict(lr=0.01, momentum=0.99, dampening=0.0, weight_decay=0.05,
                                nesterov=True),
    }
    adam = {
        "adam_default": ("adam", dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)),
        "adam_wd": ("adam", dict(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1)),
        "adam_betas": ("adam", dict(lr=3e-3, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.0)),
        "adamw_default": ("adamw", dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                                        weight_decay=0.01)),
        "adamw_large": ("adamw", dict(lr=3e-2, beta1=0.9, beta2=0.95, eps=1e-8,
                                      weight_decay=0.1)),
        "adamw_no_wd": ("adamw", dict(lr=5e-3, beta1=0.5, beta2=0.9, eps=1e-4, weight_decay=0.0)),
    }

    def run(make_opt, param, grads, state_keys):
        p = param.clone().requires_grad_()
        opt = make_opt([p])
        for k in range(steps):
            p.grad = grads[k].clone()
            opt.step()
        state = opt.state[p]
        return [p.detach()] + [state[key] for key in state_keys]

    for tag, dtype in (("f64", F64), ("f32", F32)):
        for name, o in sgd.items():
            r = Inputs(f"{name}_{tag}", dtype)
            param, grads = r.randn(3, 5), r.randn(steps, 3, 5)
            keys = ["momentum_buffer"] if o["momentum"] != 0 else []
            outs = run(lambda ps: torch.optim.SGD(ps, foreach=False, **o), param, grads, keys)
            _forward_only_case(f, f"{name}_{tag}", "sgd_steps", [param, grads], outs, **o)
        for name, (op, o) in adam.items():
            r = Inputs(f"{name}_{tag}", dtype)
            param, grads = r.randn(4, 3), r.randn(steps, 4, 3)
            cls = torch.optim.Adam if op == "adam" else torch.optim.AdamW
            kw = dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                      weight_decay=o["weight_decay"], foreach=False)
            outs = run(lambda ps: cls(ps, **kw), param, grads, ["exp_avg", "exp_avg_sq"])
            _forward_only_case(f, f"{name}_{tag}", f"{op}_steps", [param, grads], outs, **o)
        clips = {"clip_l2": (1.0, 2.0), "clip_l2_noop": (100.0, 2.0),
                 "clip_inf": (0.5, float("inf")), "clip_l1": (2.0, 1.0), "clip_p3": (0.7, 3.0)}
        for name, (max_norm, norm_type) in clips.items():
            r = Inputs(f"{name}_{tag}", dtype)
            grads = [r.randn(3, 4), r.randn(5), r.randn(2, 2)]
            ps = [torch.zeros_like(g).requires_grad_() for g in grads]
            for p, g in zip(ps, grads):
                p.grad = g.clone()
            total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
            _forward_only_case(f, f"{name}_{tag}", "clip_grad_norm", grads,
                               [total.to(dtype)] + [p.grad for p in ps], max_norm=max_norm,
                               norm_type="inf" if norm_type == float("inf") else norm_type)
    return f


# ----------------------------------------------------------------------------- golden training runs
# Not op cases: whole models trained for a few steps, read by tests/nn/golden_test.cpp (not by
# tests/ops/reference_test.cpp). Each model's PyTorch twin has the same state_dict names as the
# tapegrad module, so the weights load both ways.


class _GoldenRMSNorm(torch.nn.Module):
    def __init__(self, c, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(c))
        self.eps = eps

    def forward(self, x):
        return _torch_rms_norm(x, self.weight, self.eps)


class _GoldenAttention(torch.nn.Module):
    """nn/transformer.h CausalSelfAttention: fused qkv (no bias) split in q, k, v thirds of
    the last dim, heads (B, T, H, D) -> (B, H, T, D), rotate-half RoPE at positions 0..T-1,
    causal softmax(q k^T / sqrt(D)) v, heads back to (B, T, C), proj."""

    def __init__(self, c, n_heads, rope, theta):
        super().__init__()
        self.n_heads, self.rope, self.theta = n_heads, rope, theta
        self.qkv = torch.nn.Linear(c, 3 * c, bias=False)
        self.proj = torch.nn.Linear(c, c, bias=False)

    def forward(self, x):
        b, t, c = x.shape
        h = self.n_heads
        q, k, v = (z.reshape(b, t, h, c // h).transpose(1, 2) for z in self.qkv(x).split(c, 2))
        if self.rope:
            positions = torch.arange(t)
            q, k = _torch_rope(q, positions, self.theta), _torch_rope(k, positions, self.theta)
        out = _torch_attention(q, k, v, causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, t, c))


class _GoldenFeedForward(torch.nn.Module):
    def __init__(self, c, f):
        super().__init__()
        self.w1 = torch.nn.Linear(c, f, bias=False)
        self.w3 = torch.nn.Linear(c, f, bias=False)
        self.w2 = torch.nn.Linear(f, c, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


class _GoldenBlock(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = cfg["d_model"]
        self.attn_norm = _GoldenRMSNorm(c, cfg["norm_eps"])
        self.attn = _GoldenAttention(c, cfg["n_heads"], cfg["rope"], cfg["rope_theta"])
        self.ffn_norm = _GoldenRMSNorm(c, cfg["norm_eps"])
        self.ffn = _GoldenFeedForward(c, cfg["d_ff"])

    def forward(self, x):
        h = x + self.attn(self.attn_norm(x))
        return h + self.ffn(self.ffn_norm(h))


class _GoldenTransformerLM(torch.nn.Module):
    """The PyTorch twin of nn/transformer.h TransformerLM, parameter names and all."""

    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(cfg["vocab_size"], cfg["d_model"])
        self.blocks = torch.nn.ModuleList(_GoldenBlock(cfg) for _ in range(cfg["n_layers"]))
        self.norm = _GoldenRMSNorm(cfg["d_model"], cfg["norm_eps"])
        self.head = torch.nn.Linear(cfg["d_model"], cfg["vocab_size"], bias=False)

    def forward(self, ids):
        x = self.tok_emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def _golden_run(f, prefix, model, inputs, targets, opt_settings):
    """Trains `model` one AdamW step per batch (zero_grad, forward, cross-entropy mean,
    backward, step) and stores under "<prefix>.": init.<name> (the weights before), grad.<name>
    (the gradients of the first step), final.<name> (the weights after), x and y (the
    batches), logits (the initial model's logits for batch 0), losses (one per step); and in
    the metadata <prefix>.keys (the state_dict names, comma-separated, in PyTorch's order)."""
    for name, t in model.state_dict().items():
        f.tensors[f"{prefix}.init.{name}"] = t.detach().clone()
    f.metadata[f"{prefix}.keys"] = ",".join(model.state_dict().keys())
    with torch.no_grad():
        f.tensors[f"{prefix}.logits"] = model(inputs[0]).clone()
    opt = torch.optim.AdamW(model.parameters(), foreach=False, **opt_settings)
    losses = []
    for step in range(len(inputs)):
        opt.zero_grad(set_to_none=True)
        logits = model(inputs[step])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 targets[step].reshape(-1))
        loss.backward()
        if step == 0:
            for name, p in model.named_parameters():
                f.tensors[f"{prefix}.grad.{name}"] = p.grad.detach().clone()
        opt.step()
        losses.append(loss.detach())
    f.tensors[f"{prefix}.losses"] = torch.stack(losses)
    for name, t in model.state_dict().items():
        f.tensors[f"{prefix}.final.{name}"] = t.detach().clone()
    f.tensors[f"{prefix}.x"] = inputs.clone()
    f.tensors[f"{prefix}.y"] = targets.clone()
    for key, value in opt_settings.items():
        f.metadata[f"{prefix}.{key}"] = json.dumps(list(value) if key == "betas" else value)


def golden():
    """Golden training runs, float32: an MLP (mlp.*) and a small TransformerLM (lm.*), each
    10 AdamW steps from PyTorch's own initialisation (see _golden_run for the names)."""
    f = Family("golden")
    steps = 10
    adamw = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)
    with torch.random.fork_rng():
        torch.manual_seed(zlib.crc32(b"golden_mlp"))
        mlp = torch.nn.Sequential(torch.nn.Linear(196, 32), torch.nn.ReLU(),
                                  torch.nn.Linear(32, 16), torch.nn.ReLU(),
                                  torch.nn.Linear(16, 10))
        torch.manual_seed(zlib.crc32(b"golden_lm"))
        cfg = dict(vocab_size=29, context_length=16, d_model=32, n_layers=2, n_heads=4, d_ff=64,
                   norm_eps=1e-5, rope=True, rope_theta=10000.0)
        lm = _GoldenTransformerLM(cfg)
        with torch.no_grad():  # norm weights away from 1, so that their gradients matter
            for name, p in lm.named_parameters():
                if name.endswith("norm.weight"):
                    p.add_(0.1 * torch.randn(p.shape))
    r = Inputs("golden_mlp", F32)
    # Normalised-image-like inputs: 10 batches of 16 "14x14 images", labels in 0..9.
    x, y = r.randn(steps, 16, 196), r.index(10, steps, 16)
    _golden_run(f, "mlp", mlp, x, y, adamw)
    f.metadata["mlp.sizes"] = json.dumps([196, 32, 16, 10])
    r = Inputs("golden_lm", F32)
    tokens = r.index(cfg["vocab_size"], steps, 4, cfg["context_length"] + 1)
    _golden_run(f, "lm", lm, tokens[:, :, :-1], tokens[:, :, 1:], adamw)
    f.metadata["lm.config"] = json.dumps(cfg)
    # Mark the family as non-empty for generate() (it counts "<case>.op" entries).
    f.metadata["mlp.op"] = "golden_mlp"
    f.metadata["lm.op"] = "golden_lm"
    return f


FAMILIES = [arithmetic, unary, reduce, matmul, join, index, view, convert, rms_norm, linear,
            mse_loss, activation, softmax, cross_entropy, embedding, layer_norm, dropout, rope,
            attention, half, autocast, optim, golden]

# ----------------------------------------------------------------------------- main


def generate(directory, only=None):
    os.makedirs(directory, exist_ok=True)
    summary = []
    for make in FAMILIES:
        if only and make.__name__ not in only:
            continue
        family = make()
        if not family.metadata:
            continue  # a family with no cases yet writes no file
        family.write(directory)
        ops = sorted({v for k, v in family.metadata.items() if k.endswith(".op")})
        cases = sum(1 for k in family.metadata if k.endswith(".op"))
        size = os.path.getsize(os.path.join(directory, f"{family.name}.safetensors"))
        summary.append((family.name, cases, size, ops))
    return summary


def _describe_differences(new_path, old_path):
    """Human-readable differences between two fixture files."""
    new_t, new_m = read_safetensors(new_path)
    old_t, old_m = read_safetensors(old_path)
    lines = []
    for key in sorted(set(new_m) | set(old_m)):
        if new_m.get(key) != old_m.get(key):
            lines.append(f"  metadata {key}: committed {old_m.get(key)!r}, now {new_m.get(key)!r}")
    for name in sorted(set(new_t) | set(old_t)):
        if name not in old_t or name not in new_t:
            lines.append(f"  tensor {name}: {'new' if name not in old_t else 'gone'}")
            continue
        a, b = new_t[name], old_t[name]
        if a.dtype != b.dtype or a.shape != b.shape:
            lines.append(f"  tensor {name}: committed {b.dtype} {list(b.shape)}, "
                         f"now {a.dtype} {list(a.shape)}")
        elif not torch.equal(a, b):
            diff = (a.to(F64) - b.to(F64)).abs().nan_to_num(float("inf")).max().item()
            lines.append(f"  tensor {name}: values differ (max abs difference {diff:.3g})")
    return lines or ["  bytes differ (header layout)"]


def check(committed):
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        new_files = sorted(n for n in os.listdir(tmp) if n.endswith(".safetensors"))
        old_files = sorted(n for n in os.listdir(committed) if n.endswith(".safetensors")) \
            if os.path.isdir(committed) else []
        problems = []
        for n in sorted(set(new_files) | set(old_files)):
            if n not in old_files:
                problems.append(f"{n}: missing from {committed}")
            elif n not in new_files:
                problems.append(f"{n}: committed but no longer generated")
            elif not filecmp.cmp(os.path.join(tmp, n), os.path.join(committed, n),
                                 shallow=False):
                problems.append(f"{n}: differs")
                problems.extend(_describe_differences(os.path.join(tmp, n),
                                                      os.path.join(committed, n)))
    if problems:
        print("reference fixtures are out of date:\n" + "\n".join(problems))
        return 1
    print(f"reference fixtures in {committed} are up to date ({len(new_files)} files)")
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "fixtures"),
                        help="directory for the .safetensors files (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temp dir and compare with --out; exit 1 on "
                             "any difference")
    parser.add_argument("--only", nargs="+", metavar="FAMILY",
                        help="write only these families (e.g. --only softmax embedding)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # results must not depend on the thread count
    if args.check:
        return check(args.out)
    total = 0
    for name, cases, size, ops in generate(args.out, args.only):
        total += size
        print(f"{name}.safetensors: {cases} cases, {size} bytes, ops: {' '.join(ops)}")
    print(f"total {total} bytes in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
