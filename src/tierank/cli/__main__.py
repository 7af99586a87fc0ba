"""``python -m tierank.cli``."""

from . import run

run()
