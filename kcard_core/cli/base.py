"""The ``kcard`` group every command hangs from, and what commands share: known errors become one
line on stderr, never a traceback; ``--json`` output."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import click

from kcard_core import __version__
from kcard_core.errors import KcardError


class KcardGroup(click.Group):
    """Turns known errors into one line on stderr and a non-zero exit, never a traceback."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if any("\x00" in arg for arg in args):  # no shell passes one, but a caller's argv can ("eval --out a\x00b")
            raise click.UsageError("an argument holds a NUL character", ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KcardError as error:
            raise click.ClickException(str(error)) from None
        except Exception as error:
            if os.environ.get("KCARD_DEBUG"):
                raise
            raise click.ClickException(f"{type(error).__name__}: {error} (KCARD_DEBUG=1 shows the traceback)") from None


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


@click.group(cls=KcardGroup)
@click.version_option(__version__, prog_name="kcard")
@click.option("-v", "--verbose", is_flag=True, help="Log progress to stderr.")
@click.option("--allow-pickle", is_flag=True, help="Load pickle-based weights (.bin, .pt, .pkl), which can run code.")
def cli(verbose: bool, allow_pickle: bool) -> None:
    """kcard: knowledge cards that fill a language model's knowledge gaps."""
    if allow_pickle:
        os.environ["KCARD_ALLOW_PICKLE"] = "1"
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="kcard: %(message)s")
