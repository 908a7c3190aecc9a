"""A site with a build on every accelerator and portable, a board build (imx93) and a
--model-file build: the widest heat map zoo can draw, for layout and content tests."""

from __future__ import annotations

from pathlib import Path

from zoo.registry.npu.targets import TargetTable
from zoo.registry.site.builds import Build, gather
from zoo.registry.site.write import render_site, write_site

MEMORY = {"planned_buffers": [752640], "planned_bytes": 752640, "method_allocator_bytes": 9216,
          "load_temp_bytes": 2048, "scratch_bytes": 362000, "temp_floor_bytes": 252, "arena_cache_bytes": None}


def _build(target: str, accelerator: str | None, *, model: str = "mv2", n: int = 0, **changes: object) -> Build:
    b = Build(model=model, weights="random", target=target, key=f"{n:064x}", accelerator=accelerator,
              system_config=None, memory_mode="Shared_Sram" if accelerator else None, extra_flags=(),
              sram_budget=None, io="float", layout="nchw", io_in_key=False, precision="int8", inputs=(), time_ms=1.0 + n,
              per_second=1000.0 / (1.0 + n), sram_bytes=350e3, flash_bytes=3.4e6 if accelerator else None,
              pte_bytes=3_500_000, npu_ops=60 if accelerator else None, cpu_ops=2, partitions=1,
              cpu_op_names=(), metrics=(), weights_info={}, tools={}, built_at="2026-11-26T09:00:00",
              dram_bytes=0.0 if accelerator else None)
    b = b.with_memory(MEMORY)
    for name, value in changes.items():
        object.__setattr__(b, name, value)
    return b


def wide_site(folder: Path) -> Path:
    table = TargetTable()
    targets = table.all_targets()
    builds = [_build(t.name, t.accelerator, n=n) for n, t in enumerate(targets) if not t.board]
    builds.append(_build("imx93", "ethos-u65-256", n=90, sram_budget=640 * 1024, memory_mode="Shared_Sram",
                         dram_bytes=3.3 * 1024 * 1024))
    builds.append(_build("ethos-u55-128", "ethos-u55-128", model="two_heads", n=91, weights="file",
                         weights_info={"name": "file", "origin": "/work/examples/two_heads.py"},
                         model_file="/work/examples/two_heads.py"))
    site = gather("the local cache", builds, [], {}, from_remote=False)
    order = {t.name: i for i, t in enumerate(targets)}
    return write_site(folder, render_site(site, target_order=order,
                                          columns={t.name: t.accelerator or "portable" for t in targets}))
