"""Plugins and what they register: ``kcard plugins``, ``trust``, ``selectors``, ``readers``, ``backends``,
``cache``."""

from __future__ import annotations

import click

from kcard_core.cli.base import cli, emit_json
from kcard_core.plugins import get_registry, normalise, trust, trust_file, trusted


@cli.group("trust")
def trust_group() -> None:
    """Which plugin distributions may load (all installed ones, until you trust some)."""


@trust_group.command("add")
@click.argument("distributions", nargs=-1, required=True)
def trust_add(distributions: tuple[str, ...]) -> None:
    """Allow DISTRIBUTIONS to load; once the list exists, plugins not on it are not imported."""
    click.echo(f"trusted: {', '.join(trust([*(trusted() or []), *distributions]))}")


@trust_group.command("remove")
@click.argument("distributions", nargs=-1, required=True)
def trust_remove(distributions: tuple[str, ...]) -> None:
    """Stop loading DISTRIBUTIONS."""
    left = trust([name for name in trusted() or [] if name not in {normalise(d) for d in distributions}])
    click.echo(f"trusted: {', '.join(left) or 'nothing (no plugin loads)'}")


@trust_group.command("reset")
def trust_reset() -> None:
    """Forget the trust list: every installed plugin loads again."""
    trust_file().unlink(missing_ok=True)
    click.echo("no trust list: every installed plugin loads")


@trust_group.command("list")
@click.option("--json", "as_json", is_flag=True)
def trust_list(as_json: bool) -> None:
    """Every installed plugin: trusted or not, where its code lives, where its cards' weights come from."""
    allowed, rows = trusted(), get_registry().installed()
    if as_json:
        return emit_json({"trust_list": allowed, "plugins": rows})
    click.echo("trust list: " + (", ".join(allowed) if allowed is not None else "none (every installed plugin loads)"))
    for row in rows:
        click.echo(f"{'✓' if row['trusted'] else '✗'} {row['distribution']} {row['version']}: {row['entry_point']} "
                   f"in {row['code']}")
        for card, artifacts in row["cards"].items():
            click.echo(f"    card {card}: " + "; ".join(f"{role} = {where}" for role, where in artifacts.items()))


@cli.group()
def cache() -> None:
    """The on-disk cache of card generations."""


@cache.command("clear")
def cache_clear() -> None:
    """Delete every cached generation."""
    from kcard_core.cache import GenerationCache

    click.echo(f"removed {GenerationCache().clear()} cached generations")


@cli.group()
def selectors() -> None:
    """Selectors from installed plugins."""


@selectors.command("list")
@click.option("--json", "as_json", is_flag=True)
def selectors_list(as_json: bool) -> None:
    """List installed selectors."""
    list_factories(get_registry().selectors, as_json)


@cli.group()
def readers() -> None:
    """Readers (the answer step) from installed plugins."""


@readers.command("list")
@click.option("--json", "as_json", is_flag=True)
def readers_list(as_json: bool) -> None:
    """List installed readers."""
    list_factories(get_registry().readers, as_json)


def list_factories(factories: dict, as_json: bool) -> None:
    rows = [{"name": name, "description": (factory.__doc__ or "").strip().splitlines()[0] if factory.__doc__ else "",
             "factory": f"{factory.__module__}.{factory.__qualname__}"}
            for name, factory in factories.items()]
    if as_json:
        return emit_json(rows)
    for row in rows:
        click.echo(f"{row['name']}: {row['factory']}")


@cli.group()
def backends() -> None:
    """Backends from installed plugins."""


@backends.command("list")
@click.option("--json", "as_json", is_flag=True)
def backends_list(as_json: bool) -> None:
    """List installed backends, whether each can run here, and on which device."""
    rows = []
    for name, backend in get_registry().backends.items():
        status = backend.status()
        rows.append({"name": name, "description": backend.description, "available": status.available,
                     "device": status.device, "detail": status.detail})
    if as_json:
        return emit_json(rows)
    for row in rows:
        state = "available" if row["available"] else f"unavailable ({row['detail']})"
        click.echo(f"{row['name']}: {state} on {row['device']} — {row['description']}")


@cli.command()
@click.option("--json", "as_json", is_flag=True)
def plugins(as_json: bool) -> None:
    """List installed plugins, their hooks, versions and load errors."""
    rows = [vars(info) for info in get_registry().plugins.values()]
    if as_json:
        return emit_json(rows)
    for row in rows:
        status = "; ".join(row["errors"]) if row["errors"] else ", ".join(row["hooks"])
        click.echo(f"{row['name']} ({row['distribution']} {row['version']}): {status}")
