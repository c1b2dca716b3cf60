"""What every kcard runnable shares: a call is one LangChain run, named "kcard <mode>"."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig


class KcardRunnable(Runnable[Any, dict]):
    """Subclasses set ``mode`` and implement ``_invoke(input, config)`` (optionally ``run_manager``);
    ``invoke`` opens the run, and the config ``_invoke`` gets makes its children runs of it."""

    mode = ""

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return super().get_name(suffix, name=name or f"kcard {self.mode}")

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        return self._call_with_config(self._invoke, input, config, run_type="chain")

    def _invoke(self, input: Any, config: RunnableConfig) -> dict:
        raise NotImplementedError
