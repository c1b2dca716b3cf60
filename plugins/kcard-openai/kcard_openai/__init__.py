"""kcard plugin: the OpenAI-compatible backend. Importing this module must stay cheap."""

from kcard_core.hookspecs import hookimpl


@hookimpl
def register_backends(register):
    from kcard_openai.backend import OpenAIBackend

    register(OpenAIBackend())
