"""kcard-llama-cpp passes the backend conformance suite."""

import pytest

from kcard_core.testing import BackendTests
from kcard_llama_cpp.backend import LlamaCppBackend

pytestmark = pytest.mark.slow


class TestLlamaCppBackend(BackendTests):
    @pytest.fixture
    def backend(self):
        return LlamaCppBackend()
