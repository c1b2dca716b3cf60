"""Find plugins through the ``kcard`` entry-point group and collect what they register.

kcard's own built-ins (kcard_core.default_plugins) are registered first, then each entry point is
imported, and each hook is called through ``pm.hook`` one plugin at a time (kcard_core.hookspecs
says how), so a plugin that fails to import, or whose hook raises, is recorded with its error and
skipped: the others keep working. ``KCARD_STRICT_PLUGINS=1`` re-raises instead (for plugin
authors); ``KCARD_TRACE_PLUGINS=1`` logs every hook call; ``KCARD_LOAD_PLUGINS=a,b`` loads only
those distributions (an empty value loads none); without it, a trust list written by ``kcard trust
add`` does the same, persistently.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pluggy

from kcard_core import default_plugins, defaults, hookspecs
from kcard_core.config import user_dir
from kcard_core.errors import KcardError, UnknownNameError

ENTRY_POINT_GROUP = "kcard"
log = logging.getLogger("kcard")


@dataclass
class PluginInfo:
    name: str
    distribution: str | None
    version: str | None
    hooks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    import_seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


SLOW_IMPORT_SECONDS = 1.0  # every kcard command imports every plugin: more than this is worth a warning


def normalise(name: str) -> str:
    return name.lower().replace("_", "-")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


class Registry:
    """Everything the installed plugins registered, and what went wrong while loading them."""

    def __init__(self, strict: bool = False, trace: bool = False):
        self.strict = strict
        self.pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self.pm.add_hookspecs(hookspecs)
        if trace:  # pluggy's own hook-call tracing, on stderr
            self.pm.trace.root.setwriter(sys.stderr.write)
            self.pm.enable_tracing()
        self.plugins: dict[str, PluginInfo] = {}
        self.cards: dict[str, Any] = {}
        self.selectors: dict[str, Callable[..., Any]] = {}
        self.readers: dict[str, Callable[..., Any]] = {}
        self.backends: dict[str, Any] = {}
        self.evidence: dict[str, Callable[[], list[str]]] = {}
        self.popularity: dict[str, Callable[[str], Any]] = {}
        self.utilities: dict[str, Callable[..., Any]] = {}
        self.card_plugins: dict[str, str] = {}  # card name -> the plugin that registered it
        self.warnings: list[str] = []

    # -- loading ---------------------------------------------------------------------------

    def load_entry_points(self, only: list[str] | None = None) -> None:
        seen = set()
        for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = entry_point.dist
            dist_name = dist.name if dist else None
            if (dist_name, entry_point.name) in seen:  # the same distribution twice on sys.path
                continue
            seen.add((dist_name, entry_point.name))
            if only is not None and not {normalise(entry_point.name), normalise(dist_name or "")} & set(only):
                continue
            info = PluginInfo(entry_point.name, dist_name, dist.version if dist else None)
            self.plugins[info.name] = info
            started = time.perf_counter()
            try:
                module = entry_point.load()
            except (Exception, SystemExit) as error:  # a plugin's SyntaxError or exit() must not end kcard
                self._fail(info.name, f"import failed: {_one_line(error)}", error)
                continue
            finally:
                info.import_seconds = round(time.perf_counter() - started, 3)
            if info.import_seconds > SLOW_IMPORT_SECONDS:
                info.warnings.append(f"slow import: {info.import_seconds} s (it delays every kcard command)")
                log.warning("plugin %s: %s", info.name, info.warnings[-1])
            self.register_plugin(module, info)

    def register_plugin(self, module: Any, info: PluginInfo | None = None) -> None:
        """Register one plugin object (a module or any object with hookimpls)."""
        info = info or PluginInfo(getattr(module, "__name__", repr(module)), None, None)
        self.plugins.setdefault(info.name, info)
        try:
            self.pm.register(module, name=info.name)
        except Exception as error:
            self._fail(info.name, f"registration failed: {_one_line(error)}", error)
            return
        for caller in self.pm.get_hookcallers(module) or []:
            # the same check as pluggy's check_pending, but per plugin so one typo blames one plugin
            if caller.has_spec():
                info.hooks.append(caller.name)
            else:
                self._fail(info.name, f"hookimpl {caller.name!r} matches no kcard hook (misspelled?)",
                           pluggy.PluginValidationError(module, f"unknown hook {caller.name!r}"))

    def collect(self) -> None:
        """Call every registration hook, in the order kcard_core.hookspecs gives."""
        self.call_hook("register_backends", lambda plugin: lambda backend: self._add_backend(plugin, backend))
        self.call_hook("register_selectors",
                       lambda plugin: lambda factory, name=None: self._add_named(self.selectors, plugin, factory, name))
        self.call_hook("register_readers",
                       lambda plugin: lambda factory, name=None: self._add_named(self.readers, plugin, factory, name))
        self.call_hook("register_evidence",
                       lambda plugin: lambda name, load: self._add_named(self.evidence, plugin, load, name))
        self.call_hook("register_utilities",
                       lambda plugin: lambda factory, name=None: self._add_named(self.utilities, plugin, factory, name))
        self.call_hook("register_popularity",
                       lambda plugin: lambda name, lookup: self._add_named(self.popularity, plugin, lookup, name))
        self.call_hook("register_card_types", lambda plugin: lambda name, kind: self._add_card_type(plugin, name, kind))
        self.call_hook("register_cards", lambda plugin: lambda card: self._add_card(plugin, card))

    def call_hook(self, hook_name: str, make_argument: Callable[[str], Any], argname: str = "register") -> None:
        """``pm.hook.HOOK(argname=make_argument(plugin))`` for each plugin on its own: pluggy's
        subset caller leaves the others out, so one plugin's failure is its own."""
        plugins = dict(self.pm.list_name_plugin())
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
            others = [plugin for name, plugin in plugins.items() if name != impl.plugin_name]
            try:
                self.pm.subset_hook_caller(hook_name, others)(**{argname: make_argument(impl.plugin_name)})
            except Exception as error:
                self._fail(impl.plugin_name, f"{hook_name} failed: {_one_line(error)}", error)

    def _fail(self, plugin: str, message: str, error: BaseException) -> None:
        if self.strict:
            raise error
        self.plugins[plugin].errors.append(message)
        log.warning("plugin %s: %s", plugin, message)

    # -- what plugins register -------------------------------------------------------------

    def _add_backend(self, plugin: str, backend: Any) -> None:
        from kcard_core.backends import Backend

        if not isinstance(backend, Backend) or not backend.name:
            raise TypeError(f"register_backends expects a named Backend, got {type(backend).__name__}")
        self._add_named(self.backends, plugin, backend, backend.name)

    def _add_named(self, table: dict, plugin: str, value: Any, name: str | None) -> None:
        if not name or not isinstance(name, str):
            raise TypeError("register(...) needs a name")
        if name in table:
            self.warnings.append(f"{plugin} registers {name!r} again; the first one is kept")
            return
        table[name] = value

    def _add_card_type(self, plugin: str, name: str, kind: Any) -> None:
        from kcard_core.cards import CARD_TYPES, Card

        if not (isinstance(kind, type) and issubclass(kind, Card)):
            raise TypeError(f"register_card_types expects a Card subclass, got {kind!r}")
        if CARD_TYPES.get(name) is not kind:  # the same class again (a second registry) is no news
            self._add_named(CARD_TYPES, plugin, kind, name)

    def _add_card(self, plugin: str, card: Any) -> None:
        from kcard_core.cards import Card

        if not isinstance(card, Card):
            raise TypeError(f"register_cards expects a Card, got {type(card).__name__}")
        name = card.name
        if not any(key == name or key.endswith(f"/{name}") for key in self.cards):
            self.cards[name], self.card_plugins[name] = card, plugin
            return
        # two plugins claim one name: keep both, each under "plugin/name"
        if name in self.cards:
            first = self.card_plugins.pop(name)
            self.cards[f"{first}/{name}"] = self.cards.pop(name).renamed(f"{first}/{name}")
            self.card_plugins[f"{first}/{name}"] = first
        self.cards[f"{plugin}/{name}"], self.card_plugins[f"{plugin}/{name}"] = card.renamed(f"{plugin}/{name}"), plugin
        self.warnings.append(f"card name {name!r} is registered by more than one plugin: "
                             f"use {' or '.join(k for k in self.cards if k.endswith(f'/{name}'))}")

    def installed(self) -> list[dict[str, Any]]:
        """Every installed plugin distribution, loaded or not: trusted or not, where its code lives,
        where its cards' weights come from (``kcard trust list``)."""
        allowed, rows = trusted(), []
        for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = entry_point.dist
            name = dist.name if dist else entry_point.name
            cards = {card: {role: a.describe() for role, a in self.cards[card].manifest.artifacts.items()}
                     for card, plugin in self.card_plugins.items() if plugin == entry_point.name}
            rows.append({"distribution": name, "version": dist.version if dist else None,
                         "entry_point": entry_point.value, "code": str(dist.locate_file("")) if dist else None,
                         "trusted": allowed is None or normalise(name) in allowed, "cards": cards})
        return rows

    # -- lookups ---------------------------------------------------------------------------

    def card(self, name: str):
        if name in self.cards:
            return self.cards[name]
        qualified = [key for key in self.cards if key.endswith(f"/{name}")]
        if len(qualified) > 1:
            raise UnknownNameError(f"card {name!r} is ambiguous: use one of {', '.join(qualified)}")
        if not self.cards:
            raise UnknownNameError(NO_CARDS_MESSAGE)
        raise UnknownNameError(f"unknown card {name!r}; installed cards: {', '.join(sorted(self.cards))}")

    def backend(self, name: str | None = None):
        if not self.backends:
            raise KcardError("no backend is installed: pip install kcard-llama-cpp")
        if name is None:
            return self.backends.get("llama-cpp") or next(iter(self.backends.values()))
        if name not in self.backends:
            raise UnknownNameError(f"unknown backend {name!r}; installed: {', '.join(sorted(self.backends))}")
        return self.backends[name]

    def selector(self, name: str, spec: Any = None, **options: Any):
        """The named selector: built from a chain's ``spec`` and context (``llm``, ``logprobs``,
        ``evidence``, ``passages_for``, ``holds_answer``) by its factory's ``from_spec`` when given one, else
        ``factory(**options)``."""
        if name not in self.selectors:
            raise UnknownNameError(f"unknown selector {name!r}; installed: {', '.join(sorted(self.selectors)) or 'none'}"
                                   " (pip install kcard-selectors)")
        factory = self.selectors[name]
        if spec is not None:
            return factory.from_spec(spec, **options) if hasattr(factory, "from_spec") else factory()
        return factory(**options)

    def reader(self, name: str | None = None):
        """The named reader's factory (None: :data:`kcard_core.defaults.READER` where installed, else
        "plain"); ``factory.from_spec(spec, llm)`` builds it for a chain's settings and base LLM."""
        name = name or (defaults.READER if defaults.READER in self.readers else "plain")
        if name == "plain" and name not in self.readers:  # kcard's own, in a registry without its built-ins
            from kcard_core.readers import PlainReader

            return PlainReader
        if name not in self.readers:
            raise UnknownNameError(f"unknown reader {name!r}; installed: {', '.join(sorted(self.readers))}")
        return self.readers[name]


NO_CARDS_MESSAGE = ("no knowledge cards are installed: install one, e.g. "
                    "pip install ./plugins/kcard-card-general (see README.md)")


def load_registry(strict: bool | None = None, only: list[str] | None = None) -> Registry:
    """Discover and load every installed plugin (the environment variables decide the defaults)."""
    if strict is None:
        strict = os.environ.get("KCARD_STRICT_PLUGINS", "") not in ("", "0")
    if only is None and "KCARD_LOAD_PLUGINS" in os.environ:
        only = [normalise(name.strip()) for name in os.environ["KCARD_LOAD_PLUGINS"].split(",") if name.strip()]
    if only is None:
        only = trusted()
    registry = Registry(strict=strict, trace=os.environ.get("KCARD_TRACE_PLUGINS", "") not in ("", "0"))
    registry.register_plugin(default_plugins, PluginInfo("kcard", "kcard", importlib.metadata.version("kcard")))
    registry.load_entry_points(only)
    registry.collect()
    for warning in registry.warnings:
        log.warning(warning)
    return registry


def trust(names: list[str]) -> list[str]:
    """Write the trust list: only these distributions load from now on. Returns it as written."""
    from kcard_core.config import write_atomically

    write_atomically(trust_file(), json.dumps({"plugins": sorted(set(names))}, indent=1) + "\n")
    return trusted() or []


def trust_file() -> Path:
    return user_dir() / "trust.json"


def trusted() -> list[str] | None:
    """The distributions the user allows to load (`kcard trust add`), or None: every installed one."""
    try:
        names = json.loads(trust_file().read_text())["plugins"]
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        raise KcardError(f"{trust_file()} is not a valid trust list ({error}): fix it or run kcard trust reset") from None
    return [normalise(name) for name in names]


_registry: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, loaded on first use."""
    global _registry
    if _registry is None:
        _registry = load_registry()
    return _registry
