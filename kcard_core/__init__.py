"""kcard: knowledge cards — small specialised models that write background knowledge for an LLM."""

__version__ = "0.1.0"
