"""Where kcard keeps its files: environment variables first, empty ones meaning unset."""

from pathlib import Path

from kcard_core.config import cache_dir, user_dir


def test_empty_variables_mean_unset_never_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("KCARD_CACHE", raising=False)
    monkeypatch.delenv("KCARD_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", " ")
    assert cache_dir().is_absolute() and cache_dir().name == "kcard"
    assert user_dir().is_absolute() and user_dir().name == "kcard"
    monkeypatch.setenv("KCARD_CACHE", "")
    assert cache_dir().is_absolute()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "kcard"
    monkeypatch.setenv("KCARD_CACHE", "~/kc")
    assert cache_dir() == Path.home() / "kc"


def test_missing_evaluation_data_names_every_place_it_may_be(monkeypatch, tmp_path):
    import pytest

    from kcard_core.errors import KcardError
    from kcard_core.evaluation.datasets import load_dataset

    monkeypatch.setenv("KCARD_DATA", str(tmp_path))
    with pytest.raises(KcardError) as error:
        load_dataset("midterm-openbook")
    message = str(error.value)
    assert str(tmp_path) in message and "--data" in message and "KCARD_DATA" in message
    assert "share/kcard/data" in message  # the user data folder
