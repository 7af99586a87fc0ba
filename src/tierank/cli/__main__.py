"""``python -m tierank.cli``."""

from . import main

main()
