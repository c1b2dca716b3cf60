"""Plugin discovery: every failure is recorded against its plugin and the others keep working."""

import json

import pytest

from kcard_core.errors import UnknownNameError
from kcard_core.plugins import load_registry

GOOD_CARD = """
from pathlib import Path
from kcard_core.cards import Card, CardManifest
from kcard_core.hookspecs import hookimpl

@hookimpl
def register_cards(register):
    register(Card(CardManifest.from_dict({"name": "{name}", "description": "knows {name}", "version": "1",
                                           "license": "MIT"})))
"""


def good_card(name):
    return GOOD_CARD.replace("{name}", name)


def test_broken_plugins_are_reported_and_the_good_one_still_loads(install_fake_plugin):
    install_fake_plugin("kcard-card-good", good_card("good"))
    install_fake_plugin("kcard-broken-import", "import a_module_that_does_not_exist\n")
    install_fake_plugin("kcard-broken-syntax", "def oops(:\n")
    install_fake_plugin("kcard-broken-hook", """
        from kcard_core.hookspecs import hookimpl
        @hookimpl
        def register_cards(register):
            raise RuntimeError("the card's manifest is gone")
    """)
    install_fake_plugin("kcard-broken-garbage", """
        from kcard_core.hookspecs import hookimpl
        @hookimpl
        def register_cards(register):
            register("not a card")
    """)
    registry = load_registry(only=install_fake_plugin.names)
    assert list(registry.cards) == ["good"]
    errors = {name: info.errors for name, info in registry.plugins.items()}
    assert errors["kcard-card-good"] == []
    assert "ModuleNotFoundError" in errors["kcard-broken-import"][0]
    assert "SyntaxError" in errors["kcard-broken-syntax"][0]
    assert errors["kcard-broken-hook"] == ["register_cards failed: RuntimeError: the card's manifest is gone"]
    assert "expects a Card, got str" in errors["kcard-broken-garbage"][0]
    assert all(len(e) == 1 and "\n" not in e[0] for name, e in errors.items() if "broken" in name)


def test_strict_mode_reraises(install_fake_plugin, monkeypatch):
    install_fake_plugin("kcard-broken-import", "import a_module_that_does_not_exist\n")
    monkeypatch.setenv("KCARD_STRICT_PLUGINS", "1")
    with pytest.raises(ModuleNotFoundError):
        load_registry(only=install_fake_plugin.names)


def test_load_plugins_env_selects_distributions(install_fake_plugin, monkeypatch):
    install_fake_plugin("kcard-card-one", good_card("one"))
    install_fake_plugin("kcard-card-two", good_card("two"))
    monkeypatch.setenv("KCARD_LOAD_PLUGINS", "kcard-card-two")
    assert list(load_registry().cards) == ["two"]
    monkeypatch.setenv("KCARD_LOAD_PLUGINS", "")
    assert list(load_registry().plugins) == ["kcard"]  # kcard's own built-ins only


def test_misspelled_hookimpl_is_reported(install_fake_plugin):
    install_fake_plugin("kcard-typo", """
        from kcard_core.hookspecs import hookimpl
        @hookimpl
        def register_card(register):
            pass
    """)
    errors = load_registry(only=install_fake_plugin.names).plugins["kcard-typo"].errors
    assert errors == ["hookimpl 'register_card' matches no kcard hook (misspelled?)"]


def test_duplicate_card_names_are_kept_under_qualified_names(install_fake_plugin):
    install_fake_plugin("kcard-card-a", good_card("news"))
    install_fake_plugin("kcard-card-b", good_card("news"))
    registry = load_registry(only=install_fake_plugin.names)
    assert sorted(registry.cards) == ["kcard-card-a/news", "kcard-card-b/news"]
    assert registry.card("kcard-card-b/news").name == "kcard-card-b/news"
    assert any("more than one plugin" in warning for warning in registry.warnings)
    with pytest.raises(UnknownNameError, match="ambiguous"):
        registry.card("news")


def test_unknown_card_lists_the_installed_ones(install_fake_plugin):
    install_fake_plugin("kcard-card-good", good_card("good"))
    with pytest.raises(UnknownNameError, match="unknown card 'nope'; installed cards: good"):
        load_registry(only=install_fake_plugin.names).card("nope")


def test_trust_list_limits_which_plugins_load(install_fake_plugin):
    from click.testing import CliRunner

    from kcard_core.cli import cli

    install_fake_plugin("kcard-trusted-demo", "from kcard_core.hookspecs import hookimpl\n")
    install_fake_plugin("kcard-untrusted-demo", "raise SystemExit('this code must never run')\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["trust", "add", "kcard-trusted-demo"]).exit_code == 0
    registry = load_registry()
    assert "kcard-trusted-demo" in registry.plugins and "kcard-untrusted-demo" not in registry.plugins
    listed = json.loads(runner.invoke(cli, ["trust", "list", "--json"]).output)
    rows = {row["distribution"]: row for row in listed["plugins"]}
    assert rows["kcard-trusted-demo"]["trusted"] and not rows["kcard-untrusted-demo"]["trusted"]
    assert rows["kcard-card-general"]["cards"] == {}  # an untrusted plugin is never imported, not even to list it
    assert runner.invoke(cli, ["trust", "remove", "kcard-trusted-demo"]).output.startswith("trusted: nothing")
    assert list(load_registry().plugins) == ["kcard"]  # kcard's own built-ins only
    runner.invoke(cli, ["trust", "reset"])
    assert "kcard-untrusted-demo" in load_registry().plugins  # and its import error is recorded, not raised
    import kcard_core.plugins

    kcard_core.plugins._registry = None
    listed = json.loads(runner.invoke(cli, ["trust", "list", "--json"]).output)
    general = next(row for row in listed["plugins"] if row["distribution"] == "kcard-card-general")
    assert general["cards"]["general"]["model"].startswith("gemma-3-270m-q4_k_m.gguf assembled by")


def test_hooks_are_called_through_pluggy_one_plugin_at_a_time(install_fake_plugin, monkeypatch, capsys):
    # a hook wrapper sees its own plugin's call: the registry calls pm.hook, not the functions
    install_fake_plugin("kcard-card-wrapped", """
        from kcard_core.hookspecs import hookimpl
        seen = []

        @hookimpl(wrapper=True)
        def register_cards(register):
            seen.append("before")
            result = yield
            seen.append("after")
            return result
    """)
    install_fake_plugin("kcard-card-other", good_card("other"))
    monkeypatch.setenv("KCARD_TRACE_PLUGINS", "1")
    registry = load_registry(only=install_fake_plugin.names)
    import kcard_card_wrapped

    assert kcard_card_wrapped.seen == ["before", "after"] and list(registry.cards) == ["other"]
    # KCARD_TRACE_PLUGINS=1: pluggy's hook-call tracing on stderr
    assert "register_cards" in capsys.readouterr().err
    # kcard's own built-ins are a plugin, registered first
    assert list(registry.plugins)[0] == "kcard" and {"knowledge-f1", "self-critique"} <= set(registry.utilities)


def test_a_plugin_adds_a_card_type(install_fake_plugin, tmp_path):
    (tmp_path / "card.toml").write_text('name = "echo"\ndescription = "d"\nversion = "1"\nlicense = "MIT"\n'
                                        'type = "echo"\n')
    install_fake_plugin("kcard-echo-type", """
        from kcard_core.cards import Card
        from kcard_core.hookspecs import hookimpl

        class Echo(Card):
            def runs_on(self):
                return "echo"

            def write(self, query, n, sampling):
                return [query.upper()]

        @hookimpl
        def register_card_types(register):
            register("echo", Echo)
    """)
    install_fake_plugin("kcard-card-echo", f"""
        from kcard_core.cards import Card
        from kcard_core.hookspecs import hookimpl

        @hookimpl
        def register_cards(register):
            register(Card.from_manifest({str(tmp_path / "card.toml")!r}))
    """)
    registry = load_registry(only=install_fake_plugin.names)
    assert registry.plugins["kcard-card-echo"].errors == []
    assert registry.card("echo").generate("hello")[0].page_content == "HELLO"
