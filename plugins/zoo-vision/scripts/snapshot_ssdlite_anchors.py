"""Write ``src/zoo_vision/data/ssdlite320_anchors.json``: torchvision's anchors for a 320×320 image.

    python plugins/zoo-vision/scripts/snapshot_ssdlite_anchors.py
"""

from __future__ import annotations

import json

import torchvision
from zoo_vision import ssdlite

if __name__ == "__main__":
    data = {"torchvision": torchvision.__version__.split("+")[0], "size": ssdlite.SIDE,
            "format": "x1 y1 x2 y2 pixels", "anchors": ssdlite.generate_anchors()}
    ssdlite.ANCHORS.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {ssdlite.ANCHORS} ({len(data['anchors'])} anchors)")
