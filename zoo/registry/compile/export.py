"""Export a model with ``torch.export`` and quantize it PT2E-style with Arm's
``EthosUQuantizer``, calibrated on a dataset's samples."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from typing import Any

from zoo._errors import BuildError
from zoo._recipe import ROOT
from zoo._spec import ModelSpec, Sample
from zoo.registry.compile import qat
from zoo.registry.compile.blame import _stage
from zoo.registry.compile.boundary import configure_quantizer
from zoo.registry.compile.observers import with_observer
from zoo.registry.events import Progress
from zoo.registry.request.io_boundary import Boundary
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision


def digest_samples(samples: Sequence[Sample]) -> str:
    """sha256 over every calibration tensor's dtype, shape and bytes, in order."""
    import torch

    h = hashlib.sha256()
    for i, sample in enumerate(samples):
        for j, t in enumerate(sample):
            if isinstance(t, torch.Tensor):
                flat = t.detach().cpu().contiguous().reshape(-1)
                h.update(f"{i}/{j} {t.dtype} {list(t.shape)}\n".encode())
                h.update(flat.view(torch.uint8).numpy().tobytes())
            else:
                h.update(f"{i}/{j} {type(t).__name__} {t!r}\n".encode())
    return h.hexdigest()


def _export(model: Any, example: Sample) -> Any:
    import torch

    return torch.export.export(model, example)


def _quantize(
    graph: Any, samples: list[Sample], compile_spec: Any, where: str, report: Progress,
    boundary: Boundary | None = None, precision: Precision = DEFAULT_PRECISION, modules: Sequence[str] = (),
    training: qat.Training | None = None, transformed: list[dict[str, Any]] | None = None,
) -> Any:
    """``modules``: the model's module names, which a recipe's must be among. ``training``:
    the float model and its training inputs, for ``precision.qat`` steps of QAT (``qat.py``).
    ``transformed`` receives a record per layer of ``precision.transform`` (``weight_transforms.py``)."""
    from executorch.backends.arm import quantizer as arm_quantizer
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e

    with _stage(where, "quantizer preparation"):
        unknown = [name for name, _ in precision.modules if name not in modules and name != ROOT]
        if unknown:
            known = ", ".join(modules[:12]) + (" …" if len(modules) > 12 else "")
            raise BuildError(f"{where}: {precision.name} names module(s) the model does not have: {', '.join(unknown)}; "
                             f"its modules, as model.named_modules() names them: {known or 'none'}")
        if precision.qat and training is None:
            raise BuildError(f"{where}: {precision.name} needs training data, and the build was given none")
        wrap = qat.config if precision.qat else (lambda c: c)
        quantizer = arm_quantizer.EthosUQuantizer(compile_spec)
        quantizer.set_global(wrap(_config(arm_quantizer, precision.base, precision)))
        for name, part in precision.modules:  # a later override wins over an earlier one and the global
            config = None if part == "float" else wrap(_config(arm_quantizer, part, precision))
            if name == ROOT:
                quantizer.set_node_finder(config, _root_finder())
            else:
                quantizer.set_module_name(name, config)
        if "sqrt" in precision.float_ops:
            quantizer.set_node_finder(None, _sqrt_finder())
        if boundary is not None:
            configure_quantizer(quantizer, boundary)
        # The float model shares the graph's weights, and both QAT and the Arm quantizer's own
        # passes (FoldScalarMulIntoConvPass scales conv weights with copy_) write them in place.
        graph = copy.deepcopy(graph)
        if precision.qat:  # as prepare_pt2e does; prepare_qat_pt2e folds only training-mode BatchNorm,
            qat.fold_batchnorm(graph)  # and an eval-mode one would stay a float operator on the CPU
        prepared = (prepare_qat_pt2e if precision.qat else prepare_pt2e)(graph, quantizer)
    if precision.transform:
        from zoo.registry.compile import weight_transforms  # numpy, only for a transform

        with _stage(where, f"weight transform {precision.transform}"):
            patterns = weight_transforms.apply(prepared, precision.transform, precision.per_channel, where)
        if training is not None:
            training.patterns = patterns
        if transformed is not None:
            transformed.extend(p.record for p in patterns)
    if precision.qat and training is not None:
        from torchao.quantization.pt2e import move_exported_model_to_eval

        qat.calibrate(prepared, samples, where, report)
        training.record = qat.train(prepared, training.teacher, training.samples, precision.qat, where, report,
                                    training.patterns, precision.learning_rate)
        move_exported_model_to_eval(prepared)
    else:
        for i, sample in enumerate(samples):
            with _stage(where, f"calibration sample {i}"):
                prepared(*sample)
            report("calibrate", i + 1, len(samples))
    report("quantize", None, None)
    with _stage(where, "quantize"):
        return convert_pt2e(prepared)


def _config(arm_quantizer: Any, part: str, precision: Precision) -> Any:
    function = getattr(arm_quantizer, Precision(part).config)
    return with_observer(function() if precision.per_channel else function(is_per_channel=False), precision.observer)


def _root_finder() -> Any:
    """Finds the operators the model's own forward runs, outside every submodule."""
    from executorch.backends.arm.quantizer.arm_quantizer_utils import NodeFinder

    class RootFinder(NodeFinder):  # type: ignore[misc]  # executorch is untyped here
        def find_nodes(self, model: Any) -> Any:
            return iter([n for n in model.graph.nodes
                         if n.op == "call_function" and len(n.meta.get("nn_module_stack") or {}) <= 1])

    return RootFinder()


def _sqrt_finder() -> Any:
    """Finds sqrt as the quantizer sees it: rewritten to pow(x, 0.5) before annotation,
    so a finder for aten.sqrt would match nothing."""
    import torch
    from executorch.backends.arm.quantizer.arm_quantizer_utils import NodeFinder

    class SqrtFinder(NodeFinder):  # type: ignore[misc]  # executorch is untyped here
        def find_nodes(self, model: Any) -> Any:
            return iter([n for n in model.graph.nodes
                         if n.target == torch.ops.aten.pow.Tensor_Scalar and n.args[1] == 0.5])

    return SqrtFinder()


def _as_sample(value: Any) -> Sample:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def check_samples(samples: Sequence[Sample], spec: ModelSpec, where: str, *, first: int = 4,
                  kind: str = "calibration") -> None:
    """The first samples must match the inputs ``spec`` declares: a plugin that declares
    one shape and returns another would otherwise build a program nobody can feed."""
    import torch

    plugin = f"plugin {spec.source!r}" if spec.source else "its plugin"
    for n, sample in enumerate(samples[:first]):
        if len(sample) != len(spec.inputs):
            raise BuildError(
                f"{where}: {kind} sample {n} has {len(sample)} tensor(s), but {plugin} declares "
                f"{len(spec.inputs)} input(s) ({', '.join(i.name for i in spec.inputs)}); fix the model's {kind} data"
            )
        for declared, t in zip(spec.inputs, sample, strict=True):
            if not isinstance(t, torch.Tensor):
                raise BuildError(f"{where}: {kind} sample {n}, input {declared.name!r}, is a {type(t).__name__}, not a tensor ({plugin})")
            dtype = str(t.dtype).removeprefix("torch.")
            if tuple(t.shape) != tuple(declared.shape) or dtype != declared.dtype:
                raise BuildError(
                    f"{where}: {kind} sample {n}, input {declared.name!r}, is {dtype} {list(t.shape)}, but "
                    f"{plugin} declares {declared.dtype} {list(declared.shape)}; fix the declaration or the data"
                )
