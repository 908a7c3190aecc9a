"""Write tests/data/activations/: the TOSA graph zoo lowers mnist and resnet8-cifar to for
u55-128 (int8), and the activations of each exported float graph with the operator before
each. tests/registry/test_activations.py checks, without torch, that the TOSA graph has a
CLAMP after a convolution or linear layer exactly where the exported graph has a ReLU or
ReLU6 after one (compile/activations.py).

Run it again when the pipeline changes the TOSA graphs (PIPELINE_VERSION):
    .venv/bin/python scripts/record_activation_clamps.py
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "activations"
MODELS = {"mnist": None, "resnet8-cifar": "random"}  # model: weights variant (None: its own)
TARGET = "u55-128"
SKIPPED = {"batch_norm", "_native_batch_norm_legit_no_training", "getitem"}
ACTIVATIONS = {"relu": "relu", "relu_": "relu", "hardtanh": "hardtanh", "hardtanh_": "hardtanh", "relu6": "hardtanh"}


def exported_activations(spec, weights: str | None) -> list[dict[str, object]]:
    """Each ReLU / ReLU6 (hardtanh) of the exported float graph, in order, with its input's operator."""
    import torch

    from zoo.registry.compile.export import _as_sample

    model = spec.build(spec.weights_variant(weights).name).eval()
    graph = torch.export.export(model, _as_sample(spec.example_inputs())).graph
    found = []
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        name = getattr(node.target, "_opname", str(node.target))
        if name not in ACTIVATIONS:
            continue
        source = node.args[0]
        while getattr(source.target, "_opname", None) in SKIPPED:  # folded into the convolution
            source = source.args[0]
        found.append({
            "activation": ACTIVATIONS[name],
            "args": [a for a in node.args[1:] if isinstance(a, (int, float))],
            "after": getattr(source.target, "_opname", str(source.target)) if source.op == "call_function" else source.op,
        })
    return found


def main() -> None:
    from zoo import Zoo
    from zoo.registry.compile import compile_targets

    zoo = Zoo()
    OUT.mkdir(parents=True, exist_ok=True)
    record = {}
    for name, weights in MODELS.items():
        spec = zoo.model(name)
        (result,) = compile_targets(spec, [zoo.target(TARGET)], weights=weights)
        for i, graph in enumerate(result.tosa_graphs):
            (OUT / f"{name}_{TARGET}_{i}.tosa").write_bytes(graph)
        record[name] = {"target": TARGET, "graphs": len(result.tosa_graphs),
                        "activations": exported_activations(spec, weights)}
        print(name, len(result.tosa_graphs), "graph(s),", len(record[name]["activations"]), "activation(s)")
    (OUT / "exported.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
