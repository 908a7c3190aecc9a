"""``python -m zoo``: the zoo command line."""

from zoo.cli import run

run()
