"""What a target asks of Vela, worked out once: the options ExecuTorch's ``EthosUCompileSpec``
takes (``compile/retarget.ethosu_compile_spec`` turns them into that object) and the flag
list that compile spec gives Vela, in its order (``vela_flags``). Torch-free."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zoo._errors import BuildError
from zoo.registry.npu.targets import Target, family_defaults


@dataclass(frozen=True)
class VelaOptions:
    """A target's Vela options, as the compile spec takes them."""

    accelerator: str
    system_config: str | None
    """None: the compile spec's default for the family (``family_defaults``)."""
    memory_mode: str | None
    extra_flags: tuple[str, ...]
    config_ini: str

    @classmethod
    def of(cls, target: Target) -> VelaOptions:
        if target.accelerator is None:
            raise BuildError(f"target {target.name!r} has no NPU, so there is nothing for Vela to do")
        return cls(target.accelerator, target.system_config, target.memory_mode, tuple(target.extra_flags),
                   target.vela_ini)

    def flags(self, extra_flags: Iterable[str] = ()) -> list[str]:
        """The flags the compile spec gives Vela: extra flags first, then the fixed ones."""
        system_config, memory_mode = family_defaults(self.accelerator)
        return [
            *self.extra_flags,
            *extra_flags,
            f"--accelerator-config={self.accelerator}",
            f"--config={self.config_ini}",
            "--output-format=raw",
            f"--system-config={self.system_config or system_config}",
            f"--memory-mode={self.memory_mode or memory_mode}",
        ]


def vela_flags(target: Target, extra_flags: Iterable[str] = ()) -> list[str]:
    """The flags ExecuTorch's ``EthosUCompileSpec`` gives Vela for ``target``, in its order."""
    return VelaOptions.of(target).flags(extra_flags)
