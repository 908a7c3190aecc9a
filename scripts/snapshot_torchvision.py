"""Refresh zoo/plugins/data/torchvision_classifiers.json from the installed torchvision,
so that registering its classifiers (and `zoo list`) never imports torch.
tests/test_plugins_torchvision.py regenerates it in memory and expects the same text."""

from zoo.plugins.torchvision_classifiers import SNAPSHOT, dumps, snapshot

data = snapshot()
SNAPSHOT.write_text(dumps(data), encoding="utf-8")
print(f"wrote {SNAPSHOT}: {len(data['models'])} models from torchvision {data['torchvision_version']}")
