"""numerics/npu_constants.py on hand-made constants: how a program operation is related to the graph's, and
which changes fail (issue 58, item 3). The real programs are in tests/command_stream/test_constants_level.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from zoo.registry.command_stream import OpConstants
from zoo.registry.command_stream.weights import ScaleRecords
from zoo.registry.numerics.npu_constants import GraphConv, compare, transposed_kernels

RNG = np.random.default_rng(11)
WEIGHTS = RNG.integers(-127, 128, size=(12, 3, 3, 4)).astype(np.int64)
BIAS = RNG.integers(-9000, 9000, size=12).astype(np.int64)
MULTIPLIER = RNG.integers(1 << 29, 1 << 30, size=12).astype(np.int64) * 2
SHIFT = np.full(12, 40, dtype=np.int64)
GRAPH = [GraphConv("CONV2D 'conv' (operator 3)", WEIGHTS, BIAS, MULTIPLIER, SHIFT)]


def _op(channels: slice | list[int], name: str = "CONV at byte 0x100") -> OpConstants:
    """The graph's ``channels`` as a program operation writes them: Regor's scale halved, the shift one less."""
    return OpConstants(name, False, WEIGHTS[channels].copy(),
                       ScaleRecords(BIAS[channels].copy(), MULTIPLIER[channels] // 2, SHIFT[channels] - 1))


def test_stripes_and_an_exact_rational_scale_are_equal() -> None:
    result = compare([_op(slice(0, 8)), _op(slice(8, 12), "CONV at byte 0x140")], GRAPH)
    assert (result.operations, result.unrelated, result.difference) == (2, [], None)
    assert result.values == 12 * 36 + 3 * 12


def test_channels_need_not_be_contiguous() -> None:
    """A channel passes wherever it sits when its weights, bias and scale are some graph channel's."""
    assert compare([_op([0, 2, 4, 6])], GRAPH).difference is None


def test_a_changed_weight_bias_or_scale_fails_naming_the_channel() -> None:
    op = _op(slice(4, 12))
    op.weights[2, 1, 0, 3] += 1
    assert compare([op], GRAPH).difference == (
        "CONV at byte 0x100 (the TOSA graph's CONV2D 'conv' (operator 3), output channel 6): weight [1, 0, 3] "
        f"(kernel y, x, input channel) is {WEIGHTS[6, 1, 0, 3] + 1} in the program, {WEIGHTS[6, 1, 0, 3]} in the graph")
    op = _op(slice(4, 12))
    op.records.bias[0] -= 1
    assert compare([op], GRAPH).difference == (
        "CONV at byte 0x100 (the TOSA graph's CONV2D 'conv' (operator 3), output channel 4): the bias is "
        f"{BIAS[4] - 1} in the program, {BIAS[4]} in the graph")
    op = _op(slice(4, 12))
    op.records.scale[7] += 1
    difference = compare([op], GRAPH).difference or ""
    assert difference.startswith("CONV at byte 0x100 (the TOSA graph's CONV2D 'conv' (operator 3), output channel 11): "
                                 f"the scale is {MULTIPLIER[11] // 2 + 1} / 2^39 in the program")


def test_an_operation_no_graph_channel_names_is_counted_not_failed() -> None:
    own = OpConstants("CONV at byte 0x200", False, np.ones((2, 1, 1, 4), dtype=np.int64),
                      ScaleRecords(np.zeros(2, np.int64), np.ones(2, np.int64), np.zeros(2, np.int64)))
    result = compare([own, _op(slice(0, 12))], GRAPH)
    assert (result.operations, result.unrelated, result.difference) == (1, ["CONV at byte 0x200"], None)


def test_a_32_bit_ofm_holds_the_identity_scale_not_the_rescale() -> None:
    """Regor leaves the rescale of a convolution's int32 result to a later operation (ops-mix's MAXIMUM): the
    op's records hold 1 / 2^0, which is what it must hold; the graph's RESCALE there would be a difference."""
    ones = ScaleRecords(BIAS[:4].copy(), np.ones(4, np.int64), np.zeros(4, np.int64))
    wide = OpConstants("CONV at byte 0x180", False, WEIGHTS[:4].copy(), ones, ofm_bits=32)
    assert compare([wide], GRAPH).difference is None
    narrow = OpConstants("CONV at byte 0x180", False, WEIGHTS[:4].copy(), ones, ofm_bits=8)
    assert (compare([narrow], GRAPH).difference or "").endswith(
        f"the scale is 1 / 2^0 in the program, the RESCALE's {MULTIPLIER[0]} / 2^40 in the graph")
    wide.records.scale[1] = 2
    assert (compare([wide], GRAPH).difference or "").endswith(
        "output channel 1): the scale is 2 / 2^0 in the program, 1 / 2^0 of a 32-bit OFM")


def _transposed(stride: tuple[int, int]) -> tuple[np.ndarray[Any, Any], list[GraphConv]]:
    """A TRANSPOSE_CONV2D's 6 x 3 x 3 x 4 weights as ``graph_convs`` gives them: one entry per kernel form."""
    w = RNG.integers(-127, 128, size=(6, 3, 3, 4)).astype(np.int64)
    name = "TRANSPOSE_CONV2D 'up' (operator 5)"
    return w, [GraphConv(name + how, kernel, BIAS[:6], MULTIPLIER[:6], SHIFT[:6])
               for how, kernel in transposed_kernels(w, stride)]


def _conv(name: str, weights: np.ndarray[Any, Any]) -> OpConstants:
    """A CONV into a 32-bit OFM, as Vela writes a transposed convolution's parts: bias only, scale 1 / 2^0."""
    return OpConstants(name, False, weights.copy(),
                       ScaleRecords(BIAS[:6].copy(), np.ones(6, np.int64), np.zeros(6, np.int64)), ofm_bits=32)


def test_a_transposed_convolution_is_related_in_each_form_vela_writes() -> None:
    """The U55/U65's one CONV reads the kernel reversed in y and x; the U85's four read, for each OFM phase of
    stride 2, the taps of that phase reversed (tap indices written out here, as ops-deconv3's program holds them)."""
    w, graph = _transposed((2, 2))
    u55 = _conv("CONV at byte 0x418", w[:, [2, 1, 0]][:, :, [2, 1, 0]])
    u85 = [_conv(f"CONV at byte {at:#x}", w[:, ys][:, :, xs])
           for at, ys, xs in ((0x218, [2, 0], [2, 0]), (0x250, [2, 0], [1]), (0x28C, [1], [2, 0]), (0x2B8, [1], [1]))]
    for program in ([u55], u85):
        result = compare(program, graph)
        assert (result.operations, result.unrelated, result.difference) == (len(program), [], None)
    assert [kernel.shape[1:3] for kernel in (g.weights for g in graph)] == [(3, 3), (2, 2), (2, 1), (1, 2), (1, 1)]


def test_a_changed_weight_of_a_transposed_convolution_fails_naming_its_form() -> None:
    w, graph = _transposed((2, 2))
    op = _conv("CONV at byte 0x250", w[:, [2, 0]][:, :, [1]])
    op.weights[3, 1, 0, 2] += 1
    assert compare([op], graph).difference == (
        "CONV at byte 0x250 (the TOSA graph's TRANSPOSE_CONV2D 'up' (operator 5), its taps [0::2, 1::2] reversed in "
        f"y and x, output channel 3): weight [1, 0, 2] (kernel y, x, input channel) is {w[3, 0, 1, 2] + 1} in the "
        f"program, {w[3, 0, 1, 2]} in the graph")


def test_a_transposed_convolution_at_stride_1_is_its_reversed_kernel_once() -> None:
    w, graph = _transposed((1, 1))
    assert len(graph) == 1 and np.array_equal(graph[0].weights, w[:, ::-1, ::-1])


def test_a_32_bit_ofm_holds_scale_1_unless_its_rescale_writes_32_bits() -> None:
    """A CONV writing 32 bits leaves its RESCALE to a later operation (scale 1), but a 16-bit IFM's 48-bit accumulator
    rescaled into 32 bits is folded into the CONV by Vela: the program then holds that RESCALE's scale (a16w8's
    palm-detection-lite on u85-256, whose 53 convolutions were failed on scale 1 before)."""
    unit = ScaleRecords(BIAS.copy(), np.ones(12, np.int64), np.zeros(12, np.int64))
    folded = ScaleRecords(BIAS.copy(), MULTIPLIER // 2, SHIFT - 1)
    for rescale_bits, good, bad in ((8, unit, folded), (32, folded, unit)):
        graph = [GraphConv("CONV2D 'conv' (operator 3)", WEIGHTS, BIAS, MULTIPLIER, SHIFT, rescale_bits)]
        assert compare([OpConstants("CONV at byte 0x100", False, WEIGHTS.copy(), good, 32)], graph).difference is None
        difference = compare([OpConstants("CONV at byte 0x100", False, WEIGHTS.copy(), bad, 32)], graph).difference
        assert difference is not None and "the scale is" in difference, (rescale_bits, difference)


def test_a_64_bit_ofm_holds_scale_1_whatever_its_rescales_write() -> None:
    """A CONV whose 48-bit result two RESCALEs read writes it unscaled into a 64-bit OFM (each RESCALE a null pool of
    its own): the program holds scale 1 / 2^0 whatever the graph's RESCALE says (ops-conv64 at a16w8 on u85-256 was
    failed on the RESCALE's scale before)."""
    unit = ScaleRecords(BIAS.copy(), np.ones(12, np.int64), np.zeros(12, np.int64))
    folded = ScaleRecords(BIAS.copy(), MULTIPLIER // 2, SHIFT - 1)
    for rescale_bits in (16, 32):
        graph = [GraphConv("CONV2D 'conv' (operator 3)", WEIGHTS, BIAS, MULTIPLIER, SHIFT, rescale_bits)]
        assert compare([OpConstants("CONV at byte 0x100", False, WEIGHTS.copy(), unit, 64)], graph).difference is None
        difference = compare([OpConstants("CONV at byte 0x100", False, WEIGHTS.copy(), folded, 64)], graph).difference
        assert difference is not None and difference.endswith("1 / 2^0 of a 64-bit OFM"), difference
