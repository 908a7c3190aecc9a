"""Write ``src/zoo_vision/data/lfw_subset.json``: what registering the wake-word model needs.

    python plugins/zoo-vision/scripts/snapshot_lfw.py
"""

from __future__ import annotations

from zoo_vision import lfw

if __name__ == "__main__":
    lfw.SNAPSHOT.write_text(lfw.DATA.dumps(lfw.make_snapshot()))
    print(f"wrote {lfw.SNAPSHOT}")
