"""``python -m commet``: the ``commet`` program, for environments whose scripts folder is not on PATH."""

from commet.cli import main

main()
