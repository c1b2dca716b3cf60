"""What every kcard runnable shares: a call is one LangChain run, named "kcard <mode>"."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import patch_config, run_in_executor


class KcardRunnable(Runnable[Any, dict]):
    """Subclasses set ``mode`` and implement ``_invoke(input, config)`` (and ``_ainvoke`` where they
    can await); ``invoke`` / ``ainvoke`` open the run, and the config they pass on makes every
    other run a child of it."""

    mode = ""

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return super().get_name(suffix, name=name or f"kcard {self.mode}")

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        return self._call_with_config(self._invoke, input, config, run_type="chain")

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        async def run(input: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig) -> dict:
            return await self._ainvoke(input, patch_config(config, callbacks=run_manager.get_child()))

        return await self._acall_with_config(run, input, config, run_type="chain")

    def _invoke(self, input: Any, config: RunnableConfig) -> dict:
        raise NotImplementedError

    async def _ainvoke(self, input: Any, config: RunnableConfig) -> dict:
        """Natively async where a subclass can; here, ``_invoke`` in a worker thread."""
        return await run_in_executor(config, self._invoke, input, config)
