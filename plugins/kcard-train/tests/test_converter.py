"""llama.cpp's GGUF converter comes from one pinned release, checked by its sha256."""

import pytest

from kcard_core.errors import KcardError


def test_a_source_archive_that_does_not_match_its_pin_is_refused(tmp_path, monkeypatch):
    from kcard_train import trainer

    monkeypatch.setenv("KCARD_CACHE", str(tmp_path))  # not the shared cache: this test writes a bad archive
    archive = tmp_path / "sdist" / f"llama_cpp_python-{trainer.LLAMA_CPP_VERSION}.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes(b"not the release")
    with pytest.raises(KcardError, match="does not match its pinned sha256"):
        trainer.converter()
    assert not archive.exists() and not (tmp_path / "llama-cpp-convert").exists()
