"""The ``kcard`` command: a thin shell over the library, one module per command group. Listing
commands load plugins but never a model or a heavy library."""

from kcard_core.cli import cards, plugins, questions, serve  # noqa: F401  (their commands join the group)
from kcard_core.cli.base import cli
from kcard_core.plugins import get_registry

__all__ = ["cli", "main"]


def main() -> None:
    """Console entry point: plugins may add commands before the command line is parsed."""
    get_registry().call_hook("register_commands", lambda plugin: cli, argname="cli")
    cli()
