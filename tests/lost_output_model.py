"""The model file examples/two_heads.py (aot_arm_compiler style): LRASPP's shape in miniature,
a feature map that leaves the first NPU partition for the CPU's bilinear upsampling's consumer
and is also used inside that partition, which goes on from it. Vela drops that output on the
U55 (zoo.registry.compile.tosa_outputs); the U85 runs it whole."""

from __future__ import annotations

from pathlib import Path

LOST_OUTPUT_MODEL = (Path(__file__).parents[1] / "examples" / "two_heads.py").read_text(encoding="utf-8")
