"""kcard plugin: the transformers backend. Importing this module must stay cheap (no torch here)."""

from kcard_core.hookspecs import hookimpl


@hookimpl
def register_backends(register):
    from kcard_transformers.backend import TransformersBackend

    register(TransformersBackend())
