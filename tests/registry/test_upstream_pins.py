"""zoo's rewrites of ExecuTorch's lowering pin the upstream sources they lean on (``PINNED``,
``compile/upstream_pin.py``): a test fails when one changes, saying what to re-check
(docs/upstream.md). Torch-free: the files are read, not imported."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

import pytest

from zoo.registry.compile import activations, bilinear_x2, negation, spatial_mean, widen_linear
from zoo.registry.compile.upstream_pin import changed_upstream

RECHECK = {
    "activations": (activations.PINNED, (
        "Re-check, as docs/upstream.md describes (FuseQuantizedActivationPass), that the activations it "
        "removes are still the ones KeepQuantizedActivationPass guards, that the pass still runs before "
        "FoldAndAnnotateQParamsPass, that DecomposeGroupedConvPass still splits a grouped convolution into "
        "slice → convolution → concat with the convolution's output parameters on each group (which "
        "ClampEachGroupPass relies on; tests/registry/test_grouped_activations.py), and that U55 builds still "
        "have their CLAMPs (rebuild mnist and resnet8-cifar: scripts/record_activation_clamps.py, "
        "benchmarks/vs_tflite.py)")),
    "bilinear_x2": (bilinear_x2.PINNED, (
        "Re-check, as docs/upstream.md describes (the lost partition output), whether upstream now runs "
        "upsample_bilinear2d on the U55 and U65 (then delete bilinear_x2.py and bump PIPELINE_VERSION) and "
        "whether EthosU55ResizeCheck still takes a nearest ×2 upsampling of a static size "
        "(tests/registry/test_bilinear_x2.py builds one)")),
    "negation": (negation.PINNED, (
        "Re-check, as docs/upstream.md describes (an int8 neg lowered without its rescale), whether upstream's "
        "quantizer now shares neg's input quantization with its output or its NEGATE now rescales (then "
        "delete negation.py and bump PIPELINE_VERSION); tests/registry/test_neg_lowering.py lowers a neg both ways")),
    "spatial_mean": (spatial_mean.PINNED, (
        "Re-check, as docs/upstream.md describes (DecomposeMeanDimPass), whether upstream now lowers a "
        "spatial mean to AVG_POOL2D itself (then delete spatial_mean.py and bump PIPELINE_VERSION), and "
        "what mnasnet0-5 costs on u85-256 without the rewrite (benchmarks/vs_tflite.py)")),
    "widen_linear": (widen_linear.PINNED, (
        "Re-check, as docs/measured.md describes (widening a narrow input), whether upstream still lowers "
        "every linear layer as a 1x1 convolution (if it now gives Vela a fully connected operator, delete "
        "widen_linear.py and bump PIPELINE_VERSION), and measure the rule again with "
        "benchmarks/linear_forms.py --forms linear,widened")),
}
EDITS = [  # a file each pin holds, and an edit upstream could make to it
    ("activations", "executorch/backends/arm/_passes/fuse_quantized_activation_pass.py", "min_val == 0", "min_val <= 0"),
    ("activations", "executorch/backends/arm/_passes/decompose_grouped_conv_pass.py", "cat_args = (output_slices, 1)",
     "cat_args = (output_slices, -3)"),
    ("negation", "executorch/backends/arm/quantizer/arm_quantizer_utils.py", "        torch.ops.aten.clone.default,\n",
     "        torch.ops.aten.clone.default,\n        torch.ops.aten.neg.default,\n"),
    ("spatial_mean", "executorch/backends/arm/_passes/decompose_meandim_pass.py", "sum.dim_IntList", "avg_pool2d.default"),
    ("widen_linear", "executorch/backends/arm/_passes/decompose_linear_pass.py", "conv2d", "linear"),
    ("bilinear_x2", "executorch/backends/arm/operator_support/ethos_u55_support.py",
     "        exir_ops.edge.aten.upsample_bilinear2d.vec,  # RESIZE\n", ""),
]


@pytest.fixture
def installed() -> Path:
    if importlib.util.find_spec("executorch") is None:
        pytest.skip("executorch is not installed")
    return Path(str(importlib.metadata.distribution("executorch").locate_file("")))


@pytest.mark.parametrize("module", sorted(RECHECK))
def test_pinned_to_the_upstream_sources(module: str, installed: Path) -> None:
    pinned, recheck = RECHECK[module]
    changed = changed_upstream(pinned)
    assert not changed, (
        f"ExecuTorch's {', '.join(sorted(changed))} changed: compile/{module}.py was written against "
        f"ExecuTorch 1.5.1. {recheck}; then set its PINNED to {changed}"
    )


@pytest.mark.parametrize(("module", "path", "old", "new"), EDITS, ids=[Path(e[1]).stem for e in EDITS])
def test_a_pin_fails_when_its_upstream_file_changes(module: str, path: str, old: str, new: str,
                                                    installed: Path, tmp_path: Path) -> None:
    pinned = RECHECK[module][0]
    for each in pinned:
        (tmp_path / each).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / each).write_bytes((installed / each).read_bytes())
    assert changed_upstream(pinned, tmp_path) == {}
    text = (tmp_path / path).read_text()
    assert old in text
    (tmp_path / path).write_text(text.replace(old, new))
    assert list(changed_upstream(pinned, tmp_path)) == [path]
