#!/usr/bin/env python3
# Copyright ©2026 The repro Authors. All rights reserved.
# Use of this source code is governed by a BSD-style licence
# that can be found in the LICENSE file.
"""PyTorch side of the engine-speed comparison.

Builds the anchor shape of nn.BenchmarkAnchor (nn/anchor_bench_test.go) in
PyTorch -- a TinyMLLM-shaped model: ViT of width 64, 4 heads, 2 pre-LN
blocks over 16 patches of 7x7 and [CLS]; a 2-layer GELU projector; a causal
pre-LN language model of width 64, 4 heads, 2 blocks, vocabulary 600, head
tied to the token embedding, LoRA of rank 8 (alpha 16) on q and v; batches
of 32 sequences of 16 text tokens with one image (32 positions) and the loss
on the last 3 tokens -- and times one optimizer step:

  nonprivate  the mean loss of the batch, one backward pass, an SGD update;
  dpsgd       per-sample gradients of the LoRA tensors with torch.func
              (functorch in PyTorch 1.13; vmap over grad), clipping to norm 1, Gaussian noise of
              sigma = 1, an SGD update.

Opacus is not installed on the comparison machine (PyPI is unreachable),
so torch.func's vmap per-sample gradients stand in for Opacus's
GradSampleModule; they compute the same per-sample gradients. Where Opacus
is available, --opacus uses it instead.

It also times float32 matrix products C = A.B^T at 64, 256 and 1024.

The output is in Go's benchmark format, so benchstat compares it with
`go test -bench` output directly:

  $ /usr/bin/python3 bench/anchor.py --threads 1 --count 10 > torch-1.txt
  $ /usr/bin/python3 bench/anchor.py --threads 2 --count 10 > torch-2.txt
  $ go run golang.org/x/perf/cmd/benchstat@latest torch-1.txt go-1.txt

--bench REGEXP runs only the matching benchmarks, for example one step's
peak memory under /usr/bin/time -v (docs/engine.md, "Peak memory beside
PyTorch"):

  $ /usr/bin/time -v /usr/bin/python3 bench/anchor.py --threads 1 --count 3 --bench 'Anchor/dpsgd$'

On Debian, install python3-torch with libopenblas0-pthread: python3-torch
links the generic libblas.so.3, and without OpenBLAS the alternatives system
points it at the reference BLAS, which makes every product about 50 times
slower (GEMM 1024^3 at 1.4 against 53 GFLOP/s on one shared core).

Nothing in the tests needs this script.
"""

import argparse
import math
import os
import re
import time


def _early_threads():
    """--threads, read before torch loads: OpenBLAS and OpenMP size their
    thread pools from the environment when the library is loaded."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--threads", type=int, default=1)
    return ap.parse_known_args()[0].threads


# torch.set_num_threads sizes only ATen's OpenMP pool. Debian's PyTorch does
# its products in OpenBLAS, whose pthread build keeps its own pool of one
# thread per core whatever set_num_threads says: without this, --threads 1
# used both cores. An explicit environment wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, str(_early_threads()))

import torch  # noqa: E402  (after the thread variables)
import torch.nn as tnn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

WIDTH, HEADS, VIS_BLOCKS, LM_BLOCKS = 64, 4, 2, 2
IMAGE, PATCH, CHANNELS = 28, 7, 3
VOCAB, BATCH, TEXT, LOSS_TOKENS = 600, 32, 16, 3
RANK, ALPHA = 8, 16


class LoRALinear(tnn.Module):
    """y = x W^T + b + (alpha/r) x A^T B^T with W and b frozen."""

    def __init__(self, d_in, d_out, rank=0):
        super().__init__()
        self.base = tnn.Linear(d_in, d_out)
        self.base.requires_grad_(False)
        self.rank = rank
        if rank:
            self.a = tnn.Parameter(torch.randn(rank, d_in) / math.sqrt(d_in))
            self.b = tnn.Parameter(torch.zeros(d_out, rank))

    def forward(self, x):
        y = self.base(x)
        if self.rank:
            y = y + (ALPHA / self.rank) * (x @ self.a.t()) @ self.b.t()
        return y


class Block(tnn.Module):
    """Pre-LN transformer block: attention and a 4x GELU MLP."""

    def __init__(self, causal, lora):
        super().__init__()
        r = RANK if lora else 0
        self.ln1, self.ln2 = tnn.LayerNorm(WIDTH), tnn.LayerNorm(WIDTH)
        self.q, self.k = LoRALinear(WIDTH, WIDTH, r), LoRALinear(WIDTH, WIDTH)
        self.v, self.o = LoRALinear(WIDTH, WIDTH, r), LoRALinear(WIDTH, WIDTH)
        self.fc1, self.fc2 = LoRALinear(WIDTH, 4 * WIDTH), LoRALinear(4 * WIDTH, WIDTH)
        self.causal = causal

    def forward(self, x):
        b, t, _ = x.shape
        h = self.ln1(x)
        split = lambda z: z.view(b, t, HEADS, WIDTH // HEADS).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        s = q @ k.transpose(-1, -2) / math.sqrt(WIDTH // HEADS)
        if self.causal:
            s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        a = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, WIDTH)
        x = x + self.o(a)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyMLLM(tnn.Module):
    def __init__(self):
        super().__init__()
        n = (IMAGE // PATCH) ** 2
        self.patch = tnn.Linear(CHANNELS * PATCH * PATCH, WIDTH)
        self.cls = tnn.Parameter(torch.randn(1, 1, WIDTH) * 0.02)
        self.vpos = tnn.Parameter(torch.randn(1, n + 1, WIDTH) * 0.02)
        self.vblocks = tnn.ModuleList(Block(False, False) for _ in range(VIS_BLOCKS))
        self.vln = tnn.LayerNorm(WIDTH)
        self.proj1, self.proj2 = tnn.Linear(WIDTH, WIDTH), tnn.Linear(WIDTH, WIDTH)
        self.tok = tnn.Embedding(VOCAB, WIDTH)
        self.pos = tnn.Parameter(torch.randn(1, 64, WIDTH) * 0.02)
        self.blocks = tnn.ModuleList(Block(True, True) for _ in range(LM_BLOCKS))
        self.ln = tnn.LayerNorm(WIDTH)
        for name, p in self.named_parameters():
            p.requires_grad_(name.endswith((".a", ".b")))  # LoRA only

    def forward(self, images, tokens):
        b = images.shape[0]
        p = images.unfold(2, PATCH, PATCH).unfold(3, PATCH, PATCH)  # b, C, 4, 4, 7, 7
        p = p.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, CHANNELS * PATCH * PATCH)
        v = torch.cat([self.cls.expand(b, -1, -1), self.patch(p)], 1) + self.vpos
        for blk in self.vblocks:
            v = blk(v)
        v = self.proj2(F.gelu(self.proj1(self.vln(v))))
        # <bos>, 17 visual tokens, the 14 text tokens after <image>.
        e = self.tok(tokens)
        x = torch.cat([e[:, :1], v, e[:, 2:]], 1)
        x = x + self.pos[:, : x.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        h = self.ln(x[:, -LOSS_TOKENS - 1 : -1])  # positions predicting the loss tokens
        logits = h @ self.tok.weight.t()
        return F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, -LOSS_TOKENS:].reshape(-1))


def batch(gen):
    images = torch.rand(BATCH, CHANNELS, IMAGE, IMAGE, generator=gen)
    tokens = torch.randint(5, VOCAB, (BATCH, TEXT), generator=gen)
    return images, tokens


def step_nonprivate(model, params, images, tokens, lr=1e-3):
    for p in params:
        p.grad = None
    model(images, tokens).backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


def make_dpsgd(model, params):
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    frozen = {n: p for n, p in model.named_parameters() if not p.requires_grad}

    try:  # PyTorch 2
        from torch.func import functional_call, grad, vmap
    except ImportError:  # PyTorch 1.13: functorch and stateless.functional_call
        from functorch import grad, vmap
        from torch.nn.utils.stateless import functional_call

    def loss1(trainable, image, tok):
        ps = dict(frozen)
        ps.update(trainable)
        return functional_call(model, ps, (image[None], tok[None]))

    per_sample = vmap(grad(loss1), in_dims=(None, 0, 0))

    def step(images, tokens, lr=1e-3, clip=1.0, sigma=1.0):
        trainable = {n: p.detach() for n, p in zip(names, params)}
        g = per_sample(trainable, images, tokens)
        flat = torch.cat([g[n].reshape(BATCH, -1) for n in names], 1)
        scale = (clip / (flat.norm(dim=1) + 1e-6)).clamp(max=1.0)
        total = (flat * scale[:, None]).sum(0)
        total += sigma * clip * torch.randn_like(total)
        with torch.no_grad():
            off = 0
            for p in params:
                p -= lr / BATCH * total[off : off + p.numel()].view_as(p)
                off += p.numel()

    return step


def make_opacus(model, params):
    from opacus import GradSampleModule  # optional

    gsm = GradSampleModule(model)

    def step(images, tokens, lr=1e-3, clip=1.0, sigma=1.0):
        for p in params:
            p.grad_sample = None
        gsm(images, tokens).backward()  # mean loss: grad_sample holds per-sample grads / BATCH
        flat = torch.cat([p.grad_sample.reshape(BATCH, -1) * BATCH for p in params], 1)
        scale = (clip / (flat.norm(dim=1) + 1e-6)).clamp(max=1.0)
        total = (flat * scale[:, None]).sum(0)
        total += sigma * clip * torch.randn_like(total)
        with torch.no_grad():
            off = 0
            for p in params:
                p -= lr / BATCH * total[off : off + p.numel()].view_as(p)
                off += p.numel()

    return step


def timed(fn, min_time):
    """Runs fn at least once and for min_time seconds; returns (n, seconds, cpu seconds)."""
    fn()  # warm-up
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        fn()
        n += 1
        t = time.perf_counter() - t0
        if t >= min_time:
            return n, t, time.process_time() - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--benchtime", type=float, default=1.0, help="seconds per measurement")
    ap.add_argument("--opacus", action="store_true", help="use Opacus's GradSampleModule for dpsgd")
    ap.add_argument("--bench", default=".", help="run only the benchmarks whose name matches this regular "
                    "expression (as go test -bench; 'none' builds the model and batch and runs nothing)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(21)
    model = TinyMLLM()
    params = [p for p in model.parameters() if p.requires_grad]
    images, tokens = batch(gen)
    dp = (make_opacus if args.opacus else make_dpsgd)(model, params)
    sfx = f"-{args.threads}" if args.threads > 1 else ""
    print(f"# torch {torch.__version__}, {args.threads} threads (OPENBLAS_NUM_THREADS="
          f"{os.environ['OPENBLAS_NUM_THREADS']}, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}), "
          f"{sum(p.numel() for p in params)} trainable parameters, dpsgd via {'opacus' if args.opacus else 'torch.func vmap'}")
    print("goos: linux\ngoarch: amd64\npkg: github.com/repro-dp/repro/nn")
    benches = [
        ("Anchor/nonprivate", lambda: step_nonprivate(model, params, images, tokens), None),
        ("Anchor/dpsgd", lambda: dp(images, tokens), None),
    ]
    for size in (64, 256, 1024):
        a, b = torch.randn(size, size), torch.randn(size, size)
        c = torch.empty(size, size)
        benches.append((f"Gemm/{size}", lambda a=a, b=b, c=c: torch.mm(a, b.t(), out=c), size))
    for name, fn, size in benches:
        if not re.search(args.bench, name):
            continue
        for _ in range(args.count):
            n, t, cpu = timed(fn, args.benchtime)
            line = f"Benchmark{name}{sfx}\t{n}\t{t / n * 1e9:.0f} ns/op\t{cpu / n * 1e9:.0f} cpu-ns/op"
            if size is None:
                line += f"\t{BATCH * n / t:.1f} ex/s"
            else:
                line += f"\t{2 * size**3 * n / t / 1e9:.2f} GFLOP/s"
            print(line, flush=True)


if __name__ == "__main__":
    main()
