"""kcard plugin: the llama.cpp backend. Importing this module must stay cheap (no llama_cpp here)."""

from kcard_core.hookspecs import hookimpl


@hookimpl
def register_backends(register):
    from kcard_llama_cpp.backend import LlamaCppBackend

    register(LlamaCppBackend())
