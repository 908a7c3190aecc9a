"""Refresh zoo/registry/npu/data/vela_config.json from the installed Vela, so that a
light install (no compile extra) still knows Vela's configs."""

import json
from importlib.metadata import version
from pathlib import Path

from zoo.registry.npu.vela_config import _SNAPSHOT, installed_vela_ini, parse_vela_ini

ini = installed_vela_ini()
if ini is None:
    raise SystemExit("Vela is not installed: pip install 'ethosu-zoo[compile]'")
cfg = parse_vela_ini(ini.read_text(encoding="utf-8"), str(ini))
data = {
    "vela_version": version("ethos-u-vela"),
    "sha256": cfg.sha256,
    "system_configs": cfg.system_configs,
    "memory_modes": cfg.memory_modes,
}
Path(_SNAPSHOT).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
print(f"wrote {_SNAPSHOT}")
