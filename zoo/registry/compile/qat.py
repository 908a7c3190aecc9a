"""Quantization-aware training (``--qat STEPS``): fine-tune the model, prepared with fake
quantization, until its outputs match its own float outputs on the plugin's training inputs.

It is distillation from the float model, so it needs inputs and no labels. It starts from
exactly the post-training program: activation ranges are calibrated by the same observers as
without ``--qat``, on the same calibration data, then frozen, so step 0 is the PTQ program and
only the weights (re-ranged every step) move. Deterministic in the build's numerics mode:
the batches follow a seeded order, and plain SGD with momentum takes no square root, whose
float32 bits differ by CPU maker (``zoo.registry.request.reproducible``). The settings are
``zoo.registry.request.precision.QAT`` and part of the build key.

torch is imported inside functions.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from zoo._errors import BuildError
from zoo._spec import Sample
from zoo.registry.compile.blame import _stage
from zoo.registry.events import Progress
from zoo.registry.numerics.data import flat_outputs
from zoo.registry.request.precision import QAT

if TYPE_CHECKING:  # numpy loads with the transform, not with the pipeline (tests/test_pipeline.py)
    from zoo.registry.compile import weight_transforms


@dataclass
class Training:
    """What ``--qat`` trains on: the float model, whose outputs are the targets, and its inputs."""

    teacher: Any
    samples: list[Sample]
    patterns: list[weight_transforms.Pattern] = field(default_factory=list)
    """A weight transform's, kept while training (``weight_transforms.py``)."""
    record: dict[str, Any] = field(default_factory=dict)
    """What training did (``train``'s record), for the manifest's ``calibration.qat``."""


def fold_batchnorm(graph: Any) -> None:
    """Fold each BatchNorm that follows a convolution or linear layer into its weights and bias, in
    place, as post-training quantization does before annotating: QAT then trains the folded weights
    (the statistics stay the trained model's), and the converted program holds no BatchNorm."""
    from torchao.quantization.pt2e.utils import _fuse_conv_bn_, _fuse_linear_bn_

    _fuse_conv_bn_(graph)
    _fuse_linear_bn_(graph)


def config(base: Any) -> Any:
    """``base`` (an Arm quantization config) with each observer inside a fake quantizer."""
    wrap = _fake_quantize_class()
    changes = {}
    for name in ("input_activation", "output_activation", "weight"):
        spec = getattr(base, name)
        if spec is not None:
            changes[name] = dataclasses.replace(spec, observer_or_fake_quant_ctr=wrap.with_args(
                observer=spec.observer_or_fake_quant_ctr))
    return dataclasses.replace(base, **changes)


@cache
def _fake_quantize_class() -> Any:
    from torchao.quantization.pt2e.fake_quantize import FakeQuantize

    class ObserveThenFakeQuantize(FakeQuantize):  # type: ignore[misc]  # torchao is untyped here
        """While fake quantization is off, only observes: torchao's FakeQuantize recomputes its
        observer's qparams on every call, which for the histogram observer PTQ uses costs
        seconds per sample."""

        def forward(self, x: Any) -> Any:
            pattern = getattr(self, "weight_pattern", None)  # a weight transform's (weight_transforms.py)
            if pattern is not None:
                projected = pattern(x)
                # A projection torch cannot differentiate (a palette's) passes the gradient straight through.
                x = projected if projected.requires_grad or not x.requires_grad else x + (projected - x).detach()
            if self.fake_quant_enabled[0] == 1:
                return super().forward(x)
            if self.observer_enabled[0] == 1:
                self.activation_post_process(x.detach())
            return x

    return ObserveThenFakeQuantize


def _quantizers(prepared: Any) -> tuple[list[Any], list[Any]]:
    """The fake quantizers of ``prepared``: (frozen after calibration, re-ranged every step). A
    weight's reads a parameter and takes its min/max, per channel or not; a parameter quantized as
    an activation (PReLU's slope takes the histogram observer) keeps its calibrated range."""
    from torchao.quantization.pt2e.observer import MinMaxObserver, PerChannelMinMaxObserver

    wrap = _fake_quantize_class()
    activations: dict[int, Any] = {}
    weights: dict[int, Any] = {}
    for node in prepared.graph.nodes:
        if node.op == "call_module" and isinstance(q := prepared.get_submodule(node.target), wrap):
            source = node.args[0] if node.args else None
            weight = (getattr(source, "op", None) == "get_attr"
                      and isinstance(q.activation_post_process, (MinMaxObserver, PerChannelMinMaxObserver)))
            (weights if weight else activations)[id(q)] = q
    return [q for key, q in activations.items() if key not in weights], list(weights.values())


def calibrate(prepared: Any, samples: Sequence[Sample], where: str, report: Progress) -> None:
    """Observe ``samples`` with fake quantization off, as PTQ calibrates; then freeze the
    activation ranges and turn fake quantization on."""
    activations, weights = _quantizers(prepared)
    quantizers = activations + weights
    for q in quantizers:
        q.disable_fake_quant()
        q.enable_observer()
    for i, sample in enumerate(samples):
        with _stage(where, f"calibration sample {i}"):
            prepared(*sample)
        report("calibrate", i + 1, len(samples))
    for q in activations:
        scale, zero_point = q.calculate_qparams()
        q.scale.resize_(scale.shape).copy_(scale)
        q.zero_point.resize_(zero_point.shape).copy_(zero_point)
        q.disable_observer()
    for q in quantizers:
        q.enable_fake_quant()


def train(prepared: Any, teacher: Any, samples: Sequence[Sample], steps: int, where: str,
          report: Progress, patterns: Sequence[weight_transforms.Pattern] = (),
          learning_rate: float = float(QAT["learning_rate"])) -> dict[str, Any]:
    """``steps`` SGD steps on ``samples`` towards ``teacher``'s (the float model's) outputs, the
    learning rate falling linearly to 0. Every ``QAT["check_every"]`` steps, and at the start and
    the end, the loss over all of ``samples`` is measured; the weights with the lowest are kept,
    so training never leaves the program further from float on its own data than PTQ's.
    ``patterns``: a weight transform's, onto which the kept weights are projected at the end
    (during training the weights' fake quantizers project them). ``learning_rate``: where the
    schedule starts (``Precision.learning_rate``). Returns that record."""
    import torch

    _, weight_quantizers = _quantizers(prepared)
    with _stage(where, "quantization-aware training: the float model's outputs"):
        targets = [[o.detach().float() for o in flat_outputs(teacher(*s))] for s in samples]
    scales = [max(1e-6, math.sqrt(sum(float(t[k].pow(2).mean()) for t in targets) / len(targets)))
              for k in range(len(targets[0]))]
    params = [p for p in prepared.parameters() if p.requires_grad]
    if not params:
        raise BuildError(f"{where}: --qat has nothing to train: the prepared model has no parameters")

    def loss_of(i: int) -> Any:
        outputs = flat_outputs(prepared(*samples[i]))
        return sum(((o.float() - t) / s).pow(2).mean() for o, t, s in zip(outputs, targets[i], scales, strict=True))

    def observe_weights() -> None:  # the range of the weights as they are now, as conversion will see them
        for q in weight_quantizers:
            q.activation_post_process.reset_min_max_vals()

    def whole_loss() -> float:
        with torch.no_grad():
            observe_weights()
            return sum(float(loss_of(i)) for i in range(len(samples))) / len(samples)

    batch, every = int(QAT["batch"]), int(QAT["check_every"])
    optimiser = torch.optim.SGD(params, lr=learning_rate, momentum=QAT["momentum"])
    order = torch.randperm(len(samples), generator=torch.Generator().manual_seed(QAT["seed"])).tolist()
    with _stage(where, "quantization-aware training: PTQ's loss"):
        start = best = whole_loss()
    best_step, kept = 0, [p.detach().clone() for p in params]
    with torch.enable_grad():
        for step in range(steps):
            with _stage(where, f"quantization-aware training step {step}"):
                observe_weights()
                optimiser.zero_grad()
                loss = sum(loss_of(order[(step * batch + k) % len(samples)]) for k in range(batch)) / batch
                if not torch.isfinite(loss):
                    raise BuildError(f"{where}: quantization-aware training diverged at step {step} (loss {float(loss)}); "
                                     "use fewer --qat steps, or build without --qat")
                loss.backward()
                for p in params:  # e.g. sqrt's gradient at 0: that parameter does not move this step
                    if p.grad is not None:
                        torch.nan_to_num_(p.grad, nan=0.0, posinf=0.0, neginf=0.0)
                for group in optimiser.param_groups:
                    group["lr"] = learning_rate * (1 - step / steps)
                optimiser.step()
            if (step + 1) % every == 0 or step + 1 == steps:
                with _stage(where, f"quantization-aware training: the loss after step {step + 1}"):
                    now = whole_loss()
                if now < best:
                    best, best_step, kept = now, step + 1, [p.detach().clone() for p in params]
            report("qat", step + 1, steps)
    with torch.no_grad(), _stage(where, "quantization-aware training: the weights kept"):
        for p, value in zip(params, kept, strict=True):
            p.copy_(value)
        if patterns:
            from zoo.registry.compile.weight_transforms import finish

            finish(list(patterns))
        observe_weights()  # conversion reads the weights' ranges from their observers
        prepared(*samples[0])
    return {"steps": steps, "samples": len(samples), "learning_rate": learning_rate, "loss": {"ptq": start, "kept": best}, "kept_step": best_step}
