"""Write docs/cli.md from the commands' own --help (tests/test_docs.py fails when it is stale).

    python docs/tools/cli_reference.py
"""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from kcard_core.cli import cli
from kcard_core.plugins import get_registry

OUT = Path(__file__).resolve().parents[1] / "cli.md"


def commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, command in sorted(group.commands.items()):
        found += commands(command, path + (name,)) if isinstance(command, click.Group) else [path + (name,)]
    return found


def reference() -> str:
    get_registry().call_hook("register_commands", lambda plugin: cli, argname="cli")  # e.g. kcard train
    parts = ["# Command-line reference\n\nGenerated from each command's `--help` by `docs/tools/cli_reference.py`.\n"]
    for path in commands(cli):
        text = CliRunner().invoke(cli, [*path, "--help"], prog_name="kcard", terminal_width=100).output
        parts.append(f"## `{' '.join(('kcard', *path))}`\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    OUT.write_text(reference())
    print(f"wrote {OUT}")
