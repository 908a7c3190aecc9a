"""A partition's outputs as its TOSA graph declares them, and which of them the
graph also uses inside: the case in which Vela loses an output.

ExecuTorch hands each Ethos-U partition to Vela as a TOSA graph in NHWC, with a
transpose to NCHW before every output. When a partition's output is also an
input of a later operator inside the same partition (LRASPP's 40-channel
feature map, which the backbone goes on from and the head takes across the
CPU's upsampling), the graph holds the transpose to NCHW and, after it, its
inverse. Vela 5.1.0 cancels the pair, so no NPU operation writes the output any
more and Vela's payload lists only the partition's other outputs: the program
passes the delegate more tensors than its payload fills.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GraphOutput:
    name: str
    shape: tuple[int, ...]
    used_inside: bool
    """Whether an operator of the same graph also reads this output."""


def graph_outputs(graph: bytes) -> list[GraphOutput]:
    """The outputs of a TOSA flatbuffer's main block, in order."""
    from tosa.TosaGraph import TosaGraph  # tosa-tools, with the compile extra

    block = TosaGraph.GetRootAs(graph, 0).Regions(0).Blocks(0)
    shapes = {}
    for i in range(block.TensorsLength()):
        t = block.Tensors(i)
        shapes[t.Name().decode()] = tuple(int(t.Shape(j)) for j in range(t.ShapeLength()))
    read: set[str] = set()
    for i in range(block.OperatorsLength()):
        op = block.Operators(i)
        read.update(op.Inputs(j).decode() for j in range(op.InputsLength()))
    names = [block.Outputs(i).decode() for i in range(block.OutputsLength())]
    return [GraphOutput(n, shapes.get(n, ()), n in read) for n in names]


def lost_output_hint(tosa_graphs: list[bytes]) -> str:
    """Why delegates may have fewer Vela outputs than the program passes them, or "" if
    no partition has an output that it also uses inside."""
    said = []
    for i, graph in enumerate(tosa_graphs):
        outputs = graph_outputs(graph)
        inside = [o for o in outputs if o.used_inside]
        if inside:
            shapes = ", ".join("x".join(map(str, o.shape)) for o in inside)
            verb = "is" if len(inside) == 1 else "are"
            said.append(f"partition {i}'s TOSA graph has {len(outputs)} outputs, and {len(inside)} of them ({shapes}) "
                        f"{verb} also read inside the partition")
    if not said:
        return ""
    return ("; " + "; ".join(said) + ". Vela cancels the layout transposes around such an output, so nothing writes it "
            "and its payload leaves it out (zoo's docs/upstream.md, 'The lost partition output'). A version of "
            "the model whose CPU operator moves, or that the target runs whole, avoids it")
