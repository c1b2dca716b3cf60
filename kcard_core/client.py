"""Asking a running ``kcard serve`` (``kcard ask --server URL``): the standard library only."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from kcard_core.errors import KcardError


def ask_server(url: str, question: str, mode: str, cards: tuple[str, ...] | None = None,
               timeout: float = 600.0) -> tuple[str, dict]:
    """(the answer, its trace as JSON) from the server at ``url``."""
    body = {"model": f"kcard-{mode}", "messages": [{"role": "user", "content": question}]}
    if cards:
        body["cards"] = list(cards)
    request = urllib.request.Request(url.rstrip("/") + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            message = json.loads(error.read())["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = error.reason
        raise KcardError(f"the server at {url} answered {error.code}: {message}") from None
    except (urllib.error.URLError, OSError) as error:
        raise KcardError(f"no kcard server at {url} ({getattr(error, 'reason', error)}): start one with kcard serve")
    return data["choices"][0]["message"]["content"], data["kcard_trace"]
