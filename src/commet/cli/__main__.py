"""``python -m commet.cli``."""

from commet.cli import main

main()
