"""Give a lowered program to another Ethos-U target of the same TOSA specification.

Targets that share a TOSA specification (u55 and u65; u85) lower to the same
TOSA graphs; only Vela's output differs. So a program lowered once is
retargeted by running Vela on each delegate's TOSA graph with the other
target's flags, swapping the delegate's payload and compile specs, and
serializing in the same canonical form as a full build. The result is
byte-identical to a full build for that target (tests/test_multi_target.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zoo._errors import BuildError
from zoo.registry.compile.serialize import serialize
from zoo.registry.npu.targets import Target
from zoo.registry.npu.vela_options import VelaOptions
from zoo.registry.pte.pte_structure import ETHOSU_BACKEND_ID


def ethosu_compile_spec(target: Target) -> Any:
    """ExecuTorch's compile spec for ``target``, with its extra Vela flags."""
    from executorch.backends.arm.ethosu import EthosUCompileSpec

    options = VelaOptions.of(target)
    return EthosUCompileSpec(
        options.accelerator,
        system_config=options.system_config,
        memory_mode=options.memory_mode,
        extra_flags=list(options.extra_flags) or None,
        config_ini=options.config_ini,
    )


def retarget(pte: bytes, tosa_graphs: Sequence[bytes], payloads: Sequence[bytes],
             target: Target) -> tuple[bytes, dict[bytes, bytes]]:
    """``pte`` (canonical) with every Ethos-U delegate compiled by Vela for ``target``, and
    each old payload's new one (the numerical check runs the new programs again).

    ``payloads[i]`` is the Vela output the program holds for ``tosa_graphs[i]``.
    """
    from executorch.backends.arm.ethosu.backend import EthosUBackend
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    spec = ethosu_compile_spec(target)
    fresh = {s.key: bytes(s.value) for s in spec._to_list()}
    pte_file = deserialize_pte_binary(pte)
    program = pte_file.program
    compiled: dict[bytes, bytes] = {}
    for plan in program.execution_plan:
        for delegate in plan.delegates:
            if delegate.id != ETHOSU_BACKEND_ID:
                continue
            inline = program.backend_delegate_data[delegate.processed.index]
            old = bytes(inline.data)
            if old not in compiled:
                try:
                    tosa = tosa_graphs[list(payloads).index(old)]
                except ValueError:
                    raise BuildError(
                        f"retargeting to {target.name}: a delegate's payload is not one this build compiled"
                    ) from None
                # A fresh spec per delegate: ExecuTorch's vela_compile appends this graph's
                # --output-dir and .tosa path to the spec's compiler flags in place.
                result = EthosUBackend._compile_tosa_flatbuffer(tosa, ethosu_compile_spec(target))
                if result.external_blocks:  # zoo ships one self-contained file
                    raise BuildError(f"retargeting to {target.name}: Vela placed data outside the .pte")
                compiled[old] = bytes(result.processed_bytes)
            inline.data = compiled[old]
            # Keep what lowering added to the specs (e.g. the pass pipeline
            # config the quantizer set); take the target's flags and name.
            kept = {s.key for s in delegate.compile_specs}
            if not set(fresh) <= kept:
                raise BuildError(
                    f"retargeting to {target.name}: the delegate lacks compile specs {sorted(set(fresh) - kept)}"
                )
            delegate.compile_specs = [CompileSpec(s.key, fresh.get(s.key, bytes(s.value))) for s in delegate.compile_specs]
    return serialize(pte_file), compiled
