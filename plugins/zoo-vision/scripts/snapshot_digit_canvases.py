"""Write ``src/zoo_vision/data/digit_canvases.json``: the digits' and backgrounds' digests the canvases need.

    python plugins/zoo-vision/scripts/snapshot_digit_canvases.py
"""

from __future__ import annotations

from zoo_vision import digit_canvas

if __name__ == "__main__":
    digit_canvas.SNAPSHOT.write_text(digit_canvas.MNIST.dumps(digit_canvas.make_snapshot()))
    print(f"wrote {digit_canvas.SNAPSHOT}")
