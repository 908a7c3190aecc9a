"""Write ``zoo_sensors/data/sensors.json`` from the data files (see zoo_sensors/snapshot.py).

    ZOO_SENSORS_DATA=DIR python plugins/zoo-sensors/scripts/snapshot_sensors.py
"""

from __future__ import annotations

from zoo_sensors import snapshot

if __name__ == "__main__":
    snapshot.FILE.write_text(snapshot.dumps(snapshot.make()))
    print(f"wrote {snapshot.FILE}")
