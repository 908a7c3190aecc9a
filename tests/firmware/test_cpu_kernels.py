"""The header and manifest say which ExecuTorch kernel libraries the firmware links."""

from __future__ import annotations

from tests.fake_compile import FakeCompile
from zoo import Zoo
from zoo.registry.firmware.cpu_kernels import libraries


def test_each_namespace_names_its_library() -> None:
    assert libraries(["quantized_decomposed::quantize_per_tensor.out",
                      "quantized_decomposed::dequantize_per_tensor.out"]) == ["quantized_ops_lib"]
    assert libraries(["aten::avg_pool2d.out", "cortex_m::quantize_per_tensor.out"]) == ["cortex_m_ops_lib",
                                                                                     "portable_ops_lib"]
    assert libraries(["my_ops::thing.out"]) == ["my_ops"]
    assert libraries([]) == []


def test_a_float_boundary_links_the_portable_quantized_kernels(fake_compile: FakeCompile) -> None:
    art = Zoo().fetch("add", "u55-128")
    defines = [line.split(None, 2) for line in art.header.read_text().splitlines() if line.startswith("#define ")]
    macros = {d[1]: d[2] for d in defines if len(d) == 3}
    ops = art.manifest.cpu_operators
    assert ops and all(op.startswith("quantized_decomposed::") for op in ops)
    assert macros["MODEL_PTE_CPU_KERNELS"] == str(len(ops))
    assert macros["MODEL_PTE_CPU_KERNEL_LIBS"] == '"quantized_ops_lib"'
    assert art.manifest.header["macros"]["cpu_kernel_libs"] == "quantized_ops_lib"
