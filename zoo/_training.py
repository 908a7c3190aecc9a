"""Training a pack's classifier so that every x86_64 host writes the same weights bytes.

What the packs' training scripts need, once: zoo's reproducible float numerics (baseline
kernels, one thread, no oneDNN or NNPACK, MKL in its compatible branch: see
``zoo/registry/request/reproducible.py``), torch's deterministic algorithms, AdamW with Intel's
square root on any CPU, a seeded network and seeded shuffles, and weights written as safetensors
with nothing that varies between runs.
Torch loads inside the functions only, so that ``import zoo`` stays light.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from zoo._errors import SpecError
from zoo._fs import write_atomic
from zoo._shipped_classifier import ShippedClassifier
from zoo.registry.request import reproducible

__all__ = [
    "TrainedWeights",
    "TrainingRecipe",
    "classifier_accuracy",
    "pin_numerics",
    "save_weights",
    "train_autoencoder",
    "train_classifier",
    "train_shipped_weights",
    "train_with_loss",
]


def pin_numerics() -> None:
    """Ask for zoo's reproducible CPU kernels, the ones every build computes with.

    Call it first in a training script, before torch computes anything (loading data with
    torch counts): torch reads the setting at its first use. `train_classifier` refuses to
    train, with a `zoo.BuildError` saying why, when it was called too late."""
    reproducible.pin()


@dataclass(frozen=True)
class TrainingRecipe:
    """How `train_classifier` (and `train_autoencoder`) trains: AdamW (torch's, but for its square
    root) with a cosine schedule over ``epochs``, cross-entropy (mean squared error), batches of ``batch`` in an order drawn from ``seed``,
    and the network built from ``seed``. (Not a quantization `zoo.Recipe`.)"""

    epochs: int
    batch: int
    learning_rate: float
    weight_decay: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for field in ("epochs", "batch"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SpecError(f"TrainingRecipe: {field} must be a whole number of at least 1, not {value!r}")
        if not self.learning_rate > 0 or not self.weight_decay >= 0:
            raise SpecError(f"TrainingRecipe: learning_rate must be above 0 and weight_decay at least 0, not "
                            f"{self.learning_rate!r} and {self.weight_decay!r}")

    def describe(self) -> str:
        """One line for the weights' metadata: ``adamw lr=0.003 wd=0.0001 cosine epochs=30 batch=32 seed=0``."""
        return (f"adamw lr={self.learning_rate} wd={self.weight_decay} cosine epochs={self.epochs} "
                f"batch={self.batch} seed={self.seed}")


def train_classifier(new_network: Callable[[int], Any], inputs: Any, labels: Any, recipe: TrainingRecipe,
                     *, where: str = "training") -> Any:
    """Train ``new_network(recipe.seed)`` on ``inputs`` (one tensor, samples along the first axis)
    and ``labels`` (class indices) by ``recipe``, and return it in eval mode.

    It runs in zoo's reproducible numerics with torch's deterministic algorithms, and AdamW's
    square root is computed as Intel's MKL computes it, so every run on any x86_64 host with the
    same stack, Intel or AMD, gives the same weights. It leaves torch's random state, thread count
    and deterministic setting as they were. ``where`` names
    the run in the error raised when this process cannot compute reproducibly (torch ran
    before `pin_numerics`)."""
    import torch

    if len(inputs) != len(labels):
        raise SpecError(f"{where}: {len(inputs)} inputs but {len(labels)} labels; give one label per input")
    return _reproducibly(new_network, inputs, labels, recipe, torch.nn.CrossEntropyLoss(), where)


def train_autoencoder(new_network: Callable[[int], Any], inputs: Any, recipe: TrainingRecipe,
                      *, where: str = "training") -> Any:
    """Train ``new_network(recipe.seed)`` to reconstruct ``inputs`` (one tensor, samples along the
    first axis; the network's output has the input's shape), by mean squared error, and return
    it in eval mode: `train_classifier`'s recipe, numerics and guarantees, for an autoencoder
    trained on normal data only."""
    import torch

    return _reproducibly(new_network, inputs, inputs, recipe, torch.nn.MSELoss(), where)


def train_with_loss(new_network: Callable[[int], Any], inputs: Any, targets: Any, recipe: TrainingRecipe,
                    loss: Callable[[Any, Any], Any], *, where: str = "training") -> Any:
    """Train ``new_network(recipe.seed)`` to minimise ``loss(outputs, targets[batch])`` and return
    it in eval mode: `train_classifier`'s recipe, numerics and guarantees for a network whose
    objective is its own, a detector's or a segmenter's. ``targets`` is one tensor, one row per
    input (encode a detector's boxes as a dense grid); ``outputs`` is what the network returns
    (a tuple for several heads). The loss must compute with deterministic operations only (torch
    refuses the others here), so that the weights are the same bytes on every x86_64 host."""
    if len(inputs) != len(targets):
        raise SpecError(f"{where}: {len(inputs)} inputs but {len(targets)} targets; give one target per input")
    return _reproducibly(new_network, inputs, targets, recipe, loss, where)


def _reproducibly(new_network: Callable[[int], Any], inputs: Any, targets: Any, recipe: TrainingRecipe,
                  loss_fn: Any, where: str) -> Any:
    import torch

    deterministic = torch.are_deterministic_algorithms_enabled()
    with reproducible.numerics(torch, where), torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        torch.use_deterministic_algorithms(True)
        try:
            return _train(new_network(recipe.seed).train(), inputs, targets, recipe, loss_fn).eval()
        finally:
            torch.use_deterministic_algorithms(deterministic)


def _train(model: Any, inputs: Any, labels: Any, recipe: TrainingRecipe, loss_fn: Any) -> Any:
    import torch

    optimiser = _adamw_class()(model.parameters(), lr=recipe.learning_rate, weight_decay=recipe.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=recipe.epochs)
    shuffle = torch.Generator().manual_seed(recipe.seed)
    for _ in range(recipe.epochs):
        order = torch.randperm(inputs.shape[0], generator=shuffle)
        for start in range(0, inputs.shape[0], recipe.batch):
            batch = order[start : start + recipe.batch]
            optimiser.zero_grad()
            loss_fn(model(inputs[batch]), labels[batch]).backward()
            optimiser.step()
        schedule.step()
    return model


def classifier_accuracy(model: Any, inputs: Any, labels: Any, *, where: str = "evaluating") -> float:
    """The fraction of ``inputs`` whose highest output is their label (0 to 1), computed in
    zoo's reproducible numerics like `train_classifier`."""
    import torch

    with reproducible.numerics(torch, where), torch.no_grad():
        predicted = model(inputs).argmax(dim=1)
    return float((predicted == labels).float().mean())


def save_weights(model: Any, path: Path | str, note: str) -> str:
    """Write ``model``'s state dict to ``path`` as safetensors, with ``note`` as its one metadata
    entry (``{"zoo": note}``), readable by all (0644, as a wheel ships it), and return the file's
    sha256. The same weights give the same bytes: no timestamp, and one metadata key, since
    safetensors writes several in an order that varies between runs. Written whole or not at all."""
    from safetensors.torch import save

    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    data = save(state, metadata={"zoo": note})
    write_atomic(Path(path), data, mode=0o644)
    return hashlib.sha256(data).hexdigest()



@dataclass(frozen=True)
class TrainedWeights:
    """What `train_shipped_weights` did: the file it wrote, and the figures to print."""

    model: Any
    path: Path
    sha256: str
    size: int
    samples: int
    seconds: float
    held_out_accuracy: float
    held_out: int

    def summary(self) -> str:
        """Three lines: the training, the held-out top-1, the file."""
        return (f"trained on {self.samples} samples in {self.seconds:.1f} s\n"
                f"float top-1 on {self.held_out} held-out samples: {self.held_out_accuracy:.2%}\n"
                f"wrote {self.path} ({self.size:,} bytes, sha256 {self.sha256})")


def train_shipped_weights(classifier: ShippedClassifier, inputs: Any, labels: Any, recipe: TrainingRecipe, *,
                          note: str, out: Path | str | None = None) -> TrainedWeights:
    """Train ``classifier``'s network with `train_classifier`, measure it on its held-out split,
    and write its weights file (or ``out``) with `save_weights`; the file's metadata is ``note``,
    ``"; recipe: "`` and ``recipe.describe()``. A pack's training script is this call."""
    started = time.perf_counter()
    model = train_classifier(classifier.new_network, inputs, labels, recipe, where=f"training {classifier.name}")
    seconds = time.perf_counter() - started
    held_x, held_y = classifier.split("held_out")
    accuracy = classifier_accuracy(model, held_x, held_y, where=f"evaluating {classifier.name}")
    path = Path(out) if out is not None else classifier.weights_file
    digest = save_weights(model, path, f"{note}; recipe: {recipe.describe()}")
    return TrainedWeights(model, path, digest, path.stat().st_size, len(labels), seconds, accuracy, len(held_y))


# --- AdamW's square root, the same on every x86_64 host ------------------------------------
#
# torch.Tensor.sqrt on a CPU float32 tensor calls MKL's vector math (vsSqrt, HA). In MKL's
# COMPATIBLE mode that is the same kernel on Intel and on AMD, and it is not correctly rounded: it
# starts from the RSQRTPS instruction, whose result each CPU maker defines differently, and refines
# it once in float32. So AdamW's update followed the CPU maker. This computes that kernel's
# arithmetic in plain float32 tensor ops with Intel's RSQRTPS table, as scripts/train_mnist.py does,
# so every host gets what Intel's MKL gives.


@cache
def _intel_rsqrt_table(odd_exponent: bool) -> Any:
    """Intel's RSQRTPS mantissas (Bochs' rsqrt_table0/1): 1/sqrt of each of 1,024 mantissa
    buckets' midpoint, normalised to [1, 2), rounded to 12 fraction bits, as bits 22..8."""
    import torch

    entries = []
    for i in range(1024):
        m = 1.0 + (i + 0.5) / 1024.0
        value = 2.0 / math.sqrt(m) if odd_exponent else math.sqrt(2.0 / m)
        entries.append(8 * round((value - 1.0) * 4096.0))
    return torch.tensor(entries, dtype=torch.int32)


def _sqrt(x: Any) -> Any:
    """sqrt(x) for float32 x >= 0 exactly as MKL 2024's vsSqrt (HA, COMPATIBLE) computes it on Intel."""
    import torch

    bits = x.view(torch.int32)
    exponent = (bits >> 23) & 0xFF
    index = (bits & 0x7FFFFF) >> 13
    mantissa = torch.where((exponent & 1) == 1, _intel_rsqrt_table(True)[index], _intel_rsqrt_table(False)[index])
    y = (((0x7E - ((exponent - 0x7F) >> 1)) << 23) | (mantissa << 8)).view(torch.float32)  # RSQRTPS(x)
    s = x * y
    h = y * 0.5
    r = 0.5 - s * h
    s = s * r + s
    h = h * r + h
    out = (x - s * s) * h + s
    # MKL's own path for zeros, subnormals and x > 0x7f7ff000: the correctly rounded sqrt.
    rare = (bits < 0x00800000) | (bits > 0x7F7FF000)
    if bool(rare.any()):
        out[rare] = torch.tensor([math.sqrt(v) for v in x[rare].tolist()], dtype=torch.float32)
    return out


@cache
def _adamw_class() -> type[Any]:
    import torch

    class AdamW(torch.optim.AdamW):
        """torch.optim.AdamW's update (no amsgrad, maximize), op for op as torch 2.x's single-tensor
        path runs on CPU, with the square root above."""

        @torch.no_grad()
        def step(self, closure: Any = None) -> None:  # type: ignore[override]
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
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
                    if weight_decay != 0:
                        param.mul_(1 - lr * weight_decay)
                    exp_avg.lerp_(grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    step = state["step"].item()
                    step_size = lr / (1 - beta1**step)
                    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                    denom = (_sqrt(exp_avg_sq) / bias_correction2_sqrt).add_(eps)
                    param.addcdiv_(exp_avg, denom, value=-step_size)

    return AdamW
