"""U85 NPU_OP_ELEMENTWISE: not modelled yet. Its operand scales (``IFM_SCALE``/``IFM2_SCALE`` with a
``dbl_rnd`` field Regor sets for ADD and SUB), broadcast modes and chained operands are read in
``docs/verification.md``; until they are settled against the TOSA reference model the run stops.
"""

from __future__ import annotations

from zoo.registry.command_stream.errors import NotInterpreted
from zoo.registry.command_stream.memory import Memory
from zoo.registry.command_stream.u85.maps import Chains
from zoo.registry.command_stream.u85.regfile import U85Registers

__all__ = ["MODES", "elementwise"]

MODES = {0: "MUL", 1: "ADD", 2: "SUB", 3: "MIN", 4: "MAX", 5: "LRELU", 6: "ABS", 7: "CLZ", 8: "SHR", 9: "SHL",
         10: "LSR", 11: "DIV", 16: "CMP_EQ", 17: "CMP_NE", 18: "CMP_GE", 19: "CMP_GT", 33: "AND", 34: "OR",
         35: "XOR", 36: "NOT", 42: "AND_NOT"}


def elementwise(regs: U85Registers, memory: Memory, chains: Chains, mode: int) -> None:
    raise NotInterpreted(f"ELEMENTWISE {MODES.get(mode, str(mode))} on the U85 ({regs.op})")
