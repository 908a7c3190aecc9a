"""The true CPU/NPU split of a lowered program, from ExecuTorch's
``get_delegation_info``, and the warnings it calls for."""

from __future__ import annotations

import re
from typing import Any

from zoo.registry.npu.targets import Target

# Quantize/dequantize nodes are the int8 boundary, not work the model asked
# for: on the NPU side they fold into the TOSA ops, on the CPU side they
# convert the float inputs/outputs. They are counted apart ("cpu_quantize_ops")
# so cpu_ops/npu_ops count only the model's own operators. getitem only
# unpacks a delegate's outputs.
_BOOKKEEPING = re.compile(r"^(getitem|quantized_decomposed_(de)?quantize_per_\w+)\Z")


def _delegation(edge: Any) -> dict[str, Any]:
    from executorch.devtools.backend_debug import get_delegation_info

    gm = edge.exported_program().graph_module
    info = get_delegation_info(gm)
    npu_ops = sum(
        b.delegated for t, b in info.delegation_by_operator.items() if not _BOOKKEEPING.match(t)
    )
    # Same rule as get_delegation_info (every call_function but the delegate
    # call), with the operators' real names rather than node names.
    cpu: list[str] = []
    quantize = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.name.startswith("executorch_call_delegate"):
            continue
        name = _op_name(node.target)
        if not _BOOKKEEPING.match(name.replace(".", "_")):
            cpu.append(name)
        elif name != "getitem":
            quantize += 1
    total = npu_ops + len(cpu)
    return {
        "partitions": int(info.num_delegated_subgraphs),
        "npu_ops": int(npu_ops),
        "cpu_ops": len(cpu),
        "cpu_op_names": sorted(set(cpu)),
        "cpu_quantize_ops": quantize,
        "npu_fraction": npu_ops / total if total else 0.0,
    }


def _warnings(delegation: dict[str, Any], target: Target) -> list[str]:
    out: list[str] = []
    if delegation["partitions"] == 0:
        out.append(f"nothing was delegated to {target.name}: the whole model runs on the CPU")
    elif delegation["cpu_ops"]:
        out.append(
            f"partial CPU fallback: {delegation['cpu_ops']} operator(s) run on the CPU "
            f"({', '.join(delegation['cpu_op_names'])}), splitting the model into "
            f"{delegation['partitions']} NPU partition(s)"
        )
    return out


def _op_name(target: Any) -> str:
    name = getattr(target, "__name__", None)
    return str(name) if name else str(target)
