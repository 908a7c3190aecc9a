"""What one int8 linear layer costs on an Ethos-U85 in the two forms TOSA 1.0 offers it (issue 59,
ad-autoencoder-spar's 1.48x on u85-256): ExecuTorch's own lowering, a 1x1 CONV2D of a 1x1 IFM
(``DecomposeLinearPass``), and a MATMUL with a constant operand (``torch.bmm``, which the Arm
quantizer quantizes per tensor as an activation); ``--forms widened`` pads the input with zero
features to 64 first (``--widen-to``; weights 0 there), to see whether a narrow input's cost can be
bought off: its rows are the rule compile/widen_linear.py applies on the U85 (docs/measured.md,
"Widening a narrow linear input"). Each shape is built alone (Linear, then ReLU), quantized on 8
random inputs and lowered for each target (``--targets``); the row is Vela's estimate of it.

    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --shapes 64x32,32x64,16x64,32x128
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --shapes 8x32,32x32,32x48,48x64 --forms linear
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --shapes 32x64,32x32,8x32 --forms widened
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --targets u85-256,u85-512,u55-128,u65-256 \
        --shapes 8x32,16x64,24x64,32x32,32x64,32x128,48x64 --forms linear,widened

Prints one JSON row per shape and form: input and output features, NPU cycles, MACs and NPU
operators. A minute or so per shape on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any


def _network(form: str, cin: int, cout: int, wide: int = 64) -> tuple[Any, Any]:
    import torch

    torch.manual_seed(0)
    weight = torch.randn(cout, cin) * 0.1

    class Linear(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(cin, cout, bias=False)
            with torch.no_grad():
                self.fc.weight.copy_(weight)

        def forward(self, x: Any) -> Any:
            return torch.relu(self.fc(x))

    class Matmul(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("w", weight.t().contiguous().unsqueeze(0))

        def forward(self, x: Any) -> Any:
            return torch.relu(torch.bmm(x, self.w))

    class Widened(torch.nn.Module):  # the input padded with zero features to `wide`, the weights with zeros
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(max(cin, wide), cout, bias=False)
            with torch.no_grad():
                self.fc.weight.zero_()
                self.fc.weight[:, :cin].copy_(weight)

        def forward(self, x: Any) -> Any:
            return torch.relu(self.fc(torch.nn.functional.pad(x, (0, max(cin, wide) - cin))))

    if form == "matmul":
        return Matmul(), torch.randn(1, 1, cin)
    return (Linear() if form == "linear" else Widened()), torch.randn(1, cin)


def measure(form: str, cin: int, cout: int, target_name: str, wide: int = 64) -> dict[str, Any]:
    import torch
    from executorch.backends.arm.ethosu import EthosUPartitioner, backend
    from executorch.backends.arm.quantizer import EthosUQuantizer, get_symmetric_quantization_config
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from zoo import Zoo
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.npu.vela_report import run_vela

    target = Zoo().target(target_name)
    spec = ethosu_compile_spec(target)
    model, x = _network(form, cin, cout, wide)
    captured: list[bytes] = []
    original = backend.EthosUBackend.__dict__["_compile_tosa_flatbuffer"]

    def recording(flatbuffer: bytes, compile_spec: Any) -> Any:
        captured.append(bytes(flatbuffer))
        return original.__func__(flatbuffer, compile_spec)

    backend.EthosUBackend._compile_tosa_flatbuffer = staticmethod(recording)
    try:
        quantizer = EthosUQuantizer(spec)
        quantizer.set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        for _ in range(8):
            prepared(torch.randn_like(x))
        with contextlib.redirect_stdout(sys.stderr):  # Vela's summary: the rows alone go to stdout
            to_edge_transform_and_lower(torch.export.export(convert_pt2e(prepared), (x,)),
                                        partitioner=[EthosUPartitioner(spec)])
    finally:
        backend.EthosUBackend._compile_tosa_flatbuffer = original
    reports = [run_vela(graph, target) for graph in captured]
    return {"form": form, "in": cin, "out": cout, "target": target_name,
            **({"widened_to": max(cin, wide)} if form == "widened" else {}),
            "npu_cycles": sum(int(r["npu_cycles"]) for r in reports), "macs": sum(int(r["macs"]) for r in reports),
            "npu_operators": sum(int(r["npu_operators"]) for r in reports)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="64x32,32x64,16x64,32x128", help="INxOUT, comma-separated")
    parser.add_argument("--target", default="u85-256")
    parser.add_argument("--forms", default="linear,matmul")
    parser.add_argument("--widen-to", type=int, default=64, help="the widened form's input width")
    parser.add_argument("--targets", help="comma-separated targets; overrides --target")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parents[1]))
    for target in (args.targets or args.target).split(","):
        for shape in args.shapes.split(","):
            cin, cout = (int(n) for n in shape.split("x"))
            for form in args.forms.split(","):
                print(json.dumps(measure(form, cin, cout, target, args.widen_to)), flush=True)


if __name__ == "__main__":
    main()
