"""``kcard serve``: an OpenAI-compatible knowledge endpoint, with the models kept warm.

The model name picks the method (``kcard-bottom-up``, ``kcard-top-down-auto``, …, ``kcard-vanilla``);
a request may name its cards (``"cards": ["countries"]``). Each (method, cards) chain is built once
and reused, so models load once. The answer's trace comes back as ``kcard_trace`` and stays
readable at ``/v1/traces/{id}``. Requests beyond ``max_queue`` waiting get 429; one that runs past
``timeout`` seconds gets 503; bad requests get OpenAI-style error JSON with a 4xx status. (No
``from __future__ import annotations`` here: FastAPI reads the handlers' annotations at run time.)
"""

import asyncio
import json
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import replace
from typing import Any, AsyncIterator, Iterator

from kcard_core.defaults import BASELINES, MODES
from kcard_core.errors import KcardError
from kcard_core.spec import ChainSpec

PREFIX = "kcard-"
KEPT_TRACES = 1000  # the last traces kept for /v1/traces/{id}


class ServeError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.status, self.kind, self.code = status, kind, code

    def body(self) -> dict:
        return {"error": {"message": str(self), "type": self.kind, "param": None, "code": self.code}}


class Server:
    """What the app serves: chains by (mode, cards), a bounded queue, the last traces."""

    def __init__(self, spec: ChainSpec, max_queue: int = 32, timeout: float = 120.0, build=None):
        from kcard_core.chains import build_chain

        self.spec, self.timeout, self.build = spec, timeout, build or build_chain
        self.slots = threading.BoundedSemaphore(max_queue)  # running or waiting requests
        self.chains: dict[tuple, Any] = {}
        self.building = threading.Lock()
        self.traces: OrderedDict[str, dict] = OrderedDict()

    def models(self) -> list[str]:
        return [PREFIX + mode for mode in MODES + BASELINES]

    def chain(self, model: str, cards: list[str] | None):
        if model not in self.models():
            raise ServeError(404, f"unknown model {model!r}; choose one of {', '.join(self.models())}",
                             code="model_not_found")
        if cards is not None and not (isinstance(cards, list) and all(isinstance(c, str) for c in cards)):
            raise ServeError(400, "'cards' must be a list of card names", code="invalid_cards")
        key = (model, tuple(cards or ()))
        with self.building:  # one build per chain; its models load once and stay
            if key not in self.chains:
                try:
                    spec = replace(self.spec, mode=model.removeprefix(PREFIX), cards=cards or None)
                    self.chains[key] = self.build(spec)
                except KcardError as error:
                    raise ServeError(400, str(error), code="invalid_request") from None
                except Exception as error:  # the server's own setup (its config.toml, a model): not the request's
                    raise ServeError(500, f"{type(error).__name__}: {error}", "server_error") from None
        return self.chains[key]

    def keep(self, trace_id: str, trace: dict) -> None:
        """Keep a trace for /v1/traces/ID: the last KEPT_TRACES of them."""
        self.traces[trace_id] = trace
        while len(self.traces) > KEPT_TRACES:
            self.traces.popitem(last=False)

    def take_slot(self) -> None:
        if not self.slots.acquire(blocking=False):
            raise ServeError(429, "too many requests are waiting; try again shortly", "rate_limit_error",
                             "queue_full")

    async def answer(self, chain, question: str) -> tuple[str, dict]:
        """(the answer, its trace), run in a worker thread within the queue's bound and the timeout."""
        from starlette.concurrency import run_in_threadpool

        self.take_slot()
        try:
            result = await asyncio.wait_for(run_in_threadpool(chain.invoke, question), self.timeout)
        except asyncio.TimeoutError:
            raise ServeError(503, f"no answer within {self.timeout} s", "server_error", "timeout") from None
        except KcardError as error:
            raise ServeError(400, str(error), code="invalid_request") from None
        finally:
            self.slots.release()
        return result["answer"], result["trace"].to_dict()

    def stream(self, chain, question: str) -> Iterator[dict]:
        """The chain's chunks, holding a queue slot until the last one (429 when none is free)."""
        self.take_slot()

        def chunks() -> Iterator[dict]:
            try:
                yield from chain.stream(question)
            finally:
                self.slots.release()

        return chunks()


def new_id() -> str:
    """A completion's id, which is also its trace's at /v1/traces/ID."""
    return f"kcard-{uuid.uuid4().hex[:16]}"


def question_from(body: dict, chat: bool) -> str:
    """The question: the last user message (chat) or the prompt (completions)."""
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ServeError(400, "'messages' must be a non-empty list", code="invalid_messages")
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        if isinstance(content, list):  # content parts: their text
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        if not isinstance(content, str) or not content.strip():
            raise ServeError(400, "no user message with text content", code="invalid_messages")
        return content
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt.strip():
        raise ServeError(400, "'prompt' must be one non-empty string", code="invalid_prompt")
    return prompt


def completion(kind: str, model: str, answer: str, trace: dict, trace_id: str) -> dict:
    choice = ({"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
              if kind == "chat.completion" else {"index": 0, "text": answer, "finish_reason": "stop", "logprobs": None})
    return {"id": trace_id, "object": kind, "created": int(time.time()), "model": model, "choices": [choice],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, "kcard_trace": trace}


def create_app(server: Server):
    """The FastAPI app around ``server`` (the viewer page at /, the API under /v1)."""
    from importlib.resources import files

    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
    from starlette.concurrency import iterate_in_threadpool

    app = FastAPI(title="kcard", docs_url=None, redoc_url=None)

    @app.exception_handler(ServeError)
    async def serve_error(request: Request, error: ServeError) -> JSONResponse:
        return JSONResponse(error.body(), status_code=error.status)

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "kcard"}
                                           for name in server.models()]}

    @app.get("/v1/traces/{trace_id}")
    async def trace(trace_id: str) -> dict:
        if trace_id not in server.traces:
            raise ServeError(404, f"no trace {trace_id!r} (the last {KEPT_TRACES} are kept)", code="trace_not_found")
        return server.traces[trace_id]

    async def body_of(request: Request) -> dict:
        try:
            body = json.loads(await request.body())
        except ValueError:
            raise ServeError(400, "the request body is not JSON", code="invalid_json") from None
        if not isinstance(body, dict):
            raise ServeError(400, "the request body must be a JSON object", code="invalid_json")
        return body

    async def complete(request: Request, chat: bool):
        body = await body_of(request)
        question = question_from(body, chat)
        model = body.get("model")
        chain = await asyncio.to_thread(server.chain, model, body.get("cards"))
        kind = "chat.completion" if chat else "text_completion"
        if body.get("stream"):
            chunks = server.stream(chain, question)
            return StreamingResponse(events(iterate_in_threadpool(chunks), kind, model),
                                     media_type="text/event-stream")
        answer, trace = await server.answer(chain, question)
        trace_id = new_id()
        server.keep(trace_id, trace)
        return completion(kind, model, answer, trace, trace_id)

    async def events(chunks: AsyncIterator[dict], kind: str, model: str) -> AsyncIterator[str]:
        """Server-sent events as OpenAI streams them; the last chunk carries the trace."""
        stream_id, created, first = new_id(), int(time.time()), True
        object_kind = "chat.completion.chunk" if kind == "chat.completion" else "text_completion"

        def event(piece: str | None, finish: str | None = None, **extra: Any) -> str:
            if kind == "chat.completion":
                delta = {"role": "assistant"} if piece is None and finish is None else {}
                if piece:
                    delta["content"] = piece
                choice = {"index": 0, "delta": delta, "finish_reason": finish}
            else:
                choice = {"index": 0, "text": piece or "", "finish_reason": finish, "logprobs": None}
            data = {"id": stream_id, "object": object_kind, "created": created, "model": model,
                    "choices": [choice], **extra}
            return f"data: {json.dumps(data)}\n\n"

        try:
            async for chunk in chunks:
                if first and kind == "chat.completion":
                    yield event(None)
                first = False
                if "answer" in chunk:
                    yield event(chunk["answer"])
                elif "trace" in chunk:
                    trace = chunk["trace"].to_dict()
                    server.keep(stream_id, trace)
                    yield event(None, "stop", kcard_trace=trace)
        except Exception as error:  # the stream has begun: the error goes in it, as OpenAI sends one
            yield f"data: {json.dumps(ServeError(500, f'{type(error).__name__}: {error}', 'server_error').body())}\n\n"
        yield "data: [DONE]\n\n"

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        return await complete(request, chat=True)

    @app.post("/v1/completions")
    async def completions(request: Request):
        return await complete(request, chat=False)

    page = files("kcard_core").joinpath("viewer.html").read_text()  # read once

    @app.get("/", response_class=HTMLResponse)
    async def viewer() -> str:
        return page

    return app
