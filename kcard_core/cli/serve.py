"""``kcard serve``: the OpenAI-compatible knowledge endpoint and its trace viewer."""

from __future__ import annotations

from typing import Any

import click

from kcard_core.cli.base import cli
from kcard_core.spec import ChainSpec, spec_options


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--max-queue", default=32, show_default=True, type=click.IntRange(1, 10_000),
              help="Requests running or waiting at once; more get 429.")
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(1, 3600),
              help="Seconds a request may take; then 503.")
@spec_options("model", "backend", "n1", "n2", "n3", "selectors", "prune", "judge", "reader", "copy_bias", "type_bias",
              "max_iterations", "decide", "ensemble", "seed", "cache")
def serve(host: str, port: int, max_queue: int, timeout: float, **options: Any) -> None:
    """Serve kcard over HTTP: OpenAI-compatible /v1/chat/completions, /v1/completions and /v1/models
    (the model name picks the method: kcard-bottom-up, kcard-top-down-auto, …), traces at
    /v1/traces/ID, and a page at / to ask and see the trace. Models load once and stay warm."""
    try:
        import uvicorn
    except ImportError:
        raise click.ClickException("kcard serve needs FastAPI and uvicorn: pip install 'kcard[serve]'") from None
    from kcard_core.config import load_settings
    from kcard_core.serve import Server, create_app

    load_settings()  # a broken config.toml stops the server here, not each request

    app = create_app(Server(ChainSpec(**options), max_queue=max_queue, timeout=timeout))
    click.echo(f"kcard: serving on http://{host}:{port}/ (the viewer) and http://{host}:{port}/v1", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
