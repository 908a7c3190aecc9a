"""Write the FSDD snapshot the pack registers from (``src/zoo_audio/data/fsdd.json``).

    python plugins/zoo-audio/scripts/snapshot_fsdd.py
"""

from __future__ import annotations

from zoo_audio import fsdd


def main() -> None:
    data = fsdd.make_snapshot()
    fsdd.SNAPSHOT.write_text(fsdd.DATA.dumps(data))
    print(f"wrote {fsdd.SNAPSHOT}: {data['clips']} clips, split {data['split']}")


if __name__ == "__main__":
    main()
