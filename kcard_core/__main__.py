"""``python -m kcard_core`` is the ``kcard`` command."""

from kcard_core.cli import main

main()
