"""ExecuTorch 1.5.1's Arm backend: sqrt at 16-bit activations departs from its fake-quantized
model by hundreds of quantization steps near 0. int8 is exact.

The quantizer rewrites sqrt as pow(x, 0.5), which the backend lowers to a TOSA INT16 TABLE:
513 knots, linear interpolation over 128 input codes between them. sqrt is infinitely steep at
0, so on the first segments the interpolation falls far below it (at a quarter of the first
segment, to half of sqrt). The TOSA reference model runs the table correctly; the table is what
is wrong. At int8 the table has one entry per input code, so there is nothing to interpolate.

    python examples/int16_sqrt.py   # torch 2.14.1, executorch 1.5.1, tosa-tools 2026.5.0; no zoo
"""

import numpy as np
import torch
import tosa_reference_model as ref
from executorch.backends.arm.quantizer import (
    TOSAQuantizer,
    get_symmetric_a16w8_quantization_config,
    get_symmetric_quantization_config,
)
from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
from executorch.exir import to_edge_transform_and_lower
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Sqrt(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(x)


def steps_off(config: object, dtype: torch.dtype) -> str:
    x = torch.linspace(0, 16, 4096).reshape(1, -1)  # calibrates, then is the test input
    spec = TosaCompileSpec("TOSA-1.0+INT+int16")
    prepared = prepare_pt2e(torch.export.export(Sqrt(), (x,)).module(check_guards=False),
                            TOSAQuantizer(spec).set_global(config))
    prepared(x)
    fake_quant = convert_pt2e(prepared)
    edge = to_edge_transform_and_lower(torch.export.export(fake_quant, (x,)), partitioner=[TOSAPartitioner(spec)])
    graph = edge.exported_program().graph_module
    (q,) = [n for n in graph.graph.nodes if "quantize_per_tensor" in str(n.target) and "dequantize" not in str(n.target)]
    (dq,) = [n for n in graph.graph.nodes if "dequantize_per_tensor" in str(n.target)]
    x_q = torch.clamp(torch.round(x / q.args[1]) + q.args[2], q.args[3], q.args[4]).to(dtype).numpy()
    (y_q,), status = ref.run(graph.lowered_module_0.processed_bytes, [x_q])
    assert status == ref.GraphStatus.TOSA_VALID, status
    got = (np.asarray(y_q).astype(np.float64).reshape(-1) - dq.args[2]) * dq.args[1]
    want = fake_quant(x).double().reshape(-1).numpy()
    steps = np.abs(got - want) / dq.args[1]
    i = int(steps.argmax())
    at = float(x.reshape(-1)[i])
    return (f"max {steps.max():.0f} steps at x = {at:.4f}: TOSA {got[i]:.4f}, fake-quant {want[i]:.4f}, "
            f"sqrt {np.sqrt(at):.4f}; {int((steps > 1).sum())} of {steps.size} elements more than 1 step off")


if __name__ == "__main__":
    torch.manual_seed(0)
    print("int8: ", steps_off(get_symmetric_quantization_config(), torch.int8))
    print("a16w8:", steps_off(get_symmetric_a16w8_quantization_config(), torch.int16))
