"""What one int8 linear layer costs on an Ethos-U85 in the two forms TOSA 1.0 offers it (issue 59,
ad-autoencoder-spar's 1.48x on u85-256): ExecuTorch's own lowering, a 1x1 CONV2D of a 1x1 IFM
(``DecomposeLinearPass``), and a MATMUL with a constant operand (``torch.bmm``, which the Arm
quantizer quantizes per tensor as an activation); ``--forms widened`` pads the input with zero
features to 64 first (``--widen-to``; weights 0 there), to see whether a narrow input's cost can be
bought off: its rows are the rule compile/widen_linear.py applies on the U85 (docs/measured.md,
"Widening a narrow linear input"). ``--forms padded`` is that rewrite itself, made on the
quantized graph as zoo's build makes it (the float pad of ``widened`` is quantized on its own).
Each shape is built alone (Linear, then ReLU), quantized on 8 random inputs and lowered for each
target (``--targets``); the row is Vela's estimate of it.

    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --shapes 64x32,32x64,16x64,32x128
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --shapes 8x32,32x32,32x48,48x64 --forms linear
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --shapes 32x64,32x32,8x32 --forms widened
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --targets u85-256,u85-512,u55-128,u65-256 \
        --shapes 8x32,16x64,24x64,32x32,32x64,32x128,48x64 --forms linear,widened
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --targets u85-128,u85-256,u85-512 \
        --shapes 8x32,8x64,8x128 --forms linear,padded --widen-to 16,32,48,64
    PYTHONPATH=. .venv/bin/python benchmarks/linear_forms.py --targets u85-128,u85-256,u85-512 \
        --shapes 16x64,32x64,32x128 --forms linear,padded --vectors 4,16,49

``--widen-to`` takes a list (one widened row per width); ``--vectors T`` builds the layer over
``[1, T, in]`` (T vectors, as a sequence model's or an attention projection's), which
``DecomposeLinearPass`` lowers as a 1x1 convolution of a batch of T 1x1 IFMs.

Prints one JSON row per shape and form: input and output features, vectors, NPU cycles, MACs
and NPU operators (``--layers`` adds Vela's per-layer cycles). ``--producer`` computes the layer's
input on the NPU first (a cin → cin linear and ReLU, as a network does) and adds
``layer_cycles``, the cycles after that first layer's: whether Vela writes that layer's output
straight into the padded tensor, saving the pad's copy of its input (it does not after a
RESHAPE, docs/measured.md). A few seconds per row on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any


def _network(form: str, cin: int, cout: int, wide: int = 64, vectors: int = 1,
             producer: bool = False) -> tuple[Any, Any]:
    import torch

    torch.manual_seed(0)
    weight = torch.randn(cout, cin) * 0.1
    first = torch.randn(cin, cin) * 0.3

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

    class Produced(torch.nn.Module):  # the layer's input computed on the NPU (cin → cin, ReLU), as in a network
        def __init__(self, layer: Any) -> None:
            super().__init__()
            self.first, self.layer = torch.nn.Linear(cin, cin, bias=False), layer
            with torch.no_grad():
                self.first.weight.copy_(first)

        def forward(self, x: Any) -> Any:
            return self.layer(torch.relu(self.first(x)))

    if form == "matmul":
        model, x = Matmul(), torch.randn(1, vectors, cin)
    else:
        model, x = (Widened() if form == "widened" else Linear()), torch.randn(*((1, vectors) if vectors > 1 else (1,)), cin)
    return (Produced(model) if producer else model), x


def measure(form: str, cin: int, cout: int, target_name: str, wide: int = 64, vectors: int = 1,
            layers: bool = False, producer: bool = False) -> dict[str, Any]:
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
    model, x = _network(form, cin, cout, wide, vectors, producer)
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
        quantized = convert_pt2e(prepared)
        if form == "padded":  # zoo's own edit after quantization, on the layer measured (the last linear)
            from zoo.registry.compile.widen_linear import pad_linear_input

            last = [n for n in quantized.graph.nodes if n.target == torch.ops.aten.linear.default][-1]
            if not pad_linear_input(quantized, last, lambda features, outputs, vectors: max(features, wide)):
                raise SystemExit(f"compile/widen_linear.py did not pad {cin} → {cout}")
            quantized.graph.lint()
            quantized.recompile()
        with contextlib.redirect_stdout(sys.stderr):  # Vela's summary: the rows alone go to stdout
            to_edge_transform_and_lower(torch.export.export(quantized, (x,)), partitioner=[EthosUPartitioner(spec)])
    finally:
        backend.EthosUBackend._compile_tosa_flatbuffer = original
    reports = [run_vela(graph, target) for graph in captured]
    row: dict[str, Any] = {"form": form, "in": cin, "out": cout, "vectors": vectors, "target": target_name,
           **({"widened_to": max(cin, wide)} if form in ("widened", "padded") else {}),
           "npu_cycles": sum(int(r["npu_cycles"]) for r in reports), "macs": sum(int(r["macs"]) for r in reports),
           "npu_operators": sum(int(r["npu_operators"]) for r in reports)}
    if layers or producer:
        rows = [layer for graph in captured for layer in _layers(graph, target)]
        if producer:  # the cin → cin layer in front, Vela's first row: the rest is the layer measured (and its pad)
            row["producer_cycles"] = rows[0]["npu_cycles"]
            row["layer_cycles"] = row["npu_cycles"] - rows[0]["npu_cycles"]
        if layers:
            row["layers"] = rows
    return row


def _layers(tosa: bytes, target: Any) -> list[dict[str, Any]]:
    """Vela's per-layer rows for one partition (operator, MACs, NPU cycles), read as benchmarks/vs_tflite.py reads them."""
    import tempfile

    from benchmarks._vs_tflite_vela import run_vela as verbose_vela
    from zoo.registry.npu.vela_options import vela_flags

    with tempfile.TemporaryDirectory(prefix="linear-forms-") as tmp:
        network = Path(tmp) / "partition.tosa"
        network.write_bytes(tosa)
        run = verbose_vela(network, vela_flags(target, ()), Path(tmp) / "out")
    return [{"op": layer.op, "original": layer.original, "macs": layer.macs, "npu_cycles": layer.npu_cycles}
            for layer in run.layers]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="64x32,32x64,16x64,32x128", help="INxOUT, comma-separated")
    parser.add_argument("--target", default="u85-256")
    parser.add_argument("--forms", default="linear,matmul")
    parser.add_argument("--widen-to", default="64", help="the widened form's input widths, comma-separated")
    parser.add_argument("--vectors", default="1", help="vectors per input ([1, T, in] for T > 1), comma-separated")
    parser.add_argument("--targets", help="comma-separated targets; overrides --target")
    parser.add_argument("--layers", action="store_true", help="also Vela's per-layer cycles")
    parser.add_argument("--producer", action="store_true",
                        help="compute the layer's input on the NPU first (a cin → cin linear and ReLU), as in a network")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parents[1]))
    widths = [int(n) for n in args.widen_to.split(",")]
    for target in (args.targets or args.target).split(","):
        for vectors in (int(n) for n in args.vectors.split(",")):
            for shape in args.shapes.split(","):
                cin, cout = (int(n) for n in shape.split("x"))
                for form in args.forms.split(","):
                    for wide in (widths if form in ("widened", "padded") else widths[:1]):
                        row = measure(form, cin, cout, target, wide, vectors, args.layers, args.producer)
                        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
