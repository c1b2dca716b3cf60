"""kcard-transformers passes the backend conformance suite."""

import pytest

from kcard_core.testing import BackendTests
from kcard_transformers.backend import TransformersBackend

pytestmark = pytest.mark.slow


class TestTransformersBackend(BackendTests):
    @pytest.fixture
    def backend(self):
        return TransformersBackend()
