"""Write ``zoo/datasets/lfw_subset.json``: what registering a model on lfw_subset needs.

    python scripts/snapshot_lfw.py
"""

from __future__ import annotations

from zoo.datasets import lfw_subset

if __name__ == "__main__":
    lfw_subset.SNAPSHOT.write_text(lfw_subset.DATA.dumps(lfw_subset.make_snapshot()))
    print(f"wrote {lfw_subset.SNAPSHOT}")
