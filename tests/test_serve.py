"""kcard serve: OpenAI-compatible endpoints, errors as OpenAI sends them, a bounded queue; for real
as a process that the openai client, ChatOpenAI and `kcard ask --server` talk to."""

import json
import os
import subprocess
import sys

import pytest
from langchain_core.language_models.fake import FakeListLLM

from kcard_core.chains import BottomUp
from kcard_core.serve import Server, create_app
from kcard_core.spec import ChainSpec
from test_chains import ByLength, cards  # noqa: F401  (a fixture)


@pytest.fixture
def client(cards):  # noqa: F811
    from fastapi.testclient import TestClient

    built = []

    def build(spec):
        built.append(spec)
        chosen = [card for card in cards if not spec.cards or card.name in spec.cards]
        return BottomUp(FakeListLLM(responses=[f"Paris ({spec.mode})"]), chosen, [ByLength(keep=1)], n1=1, examples=[])

    server = Server(ChainSpec(), max_queue=2, timeout=5, build=build)
    test_client = TestClient(create_app(server))
    test_client.server, test_client.built = server, built
    return test_client


def test_models_name_the_methods(client):
    names = [model["id"] for model in client.get("/v1/models").json()["data"]]
    assert names[:2] == ["kcard-bottom-up", "kcard-top-down-auto"] and "kcard-vanilla" in names


def test_a_chat_completion_carries_its_trace_and_the_chain_is_built_once(client):
    body = {"model": "kcard-bottom-up", "messages": [{"role": "user", "content": "Capital of France?"}],
            "cards": ["science"]}
    first, second = (client.post("/v1/chat/completions", json=body).json() for _ in range(2))
    assert first["object"] == "chat.completion" and first["choices"][0]["message"]["content"] == "Paris (bottom-up)"
    assert first["kcard_trace"]["question"] == "Capital of France?"
    assert [doc["card"] for doc in first["kcard_trace"]["documents"]] == ["science"]
    assert client.get(f"/v1/traces/{first['id']}").json() == first["kcard_trace"]
    assert len(client.built) == 1 and client.built[0].cards == ("science",)  # warm: built once
    text = client.post("/v1/completions", json={"model": "kcard-bottom-up", "prompt": "Capital?"}).json()
    assert text["object"] == "text_completion" and text["choices"][0]["text"] == "Paris (bottom-up)"


def test_streaming_is_server_sent_events_ending_with_the_trace(client):
    body = {"model": "kcard-bottom-up", "stream": True, "messages": [{"role": "user", "content": "Capital?"}]}
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        lines = [line for line in response.iter_lines() if line]
    assert response.headers["content-type"].startswith("text/event-stream") and lines[-1] == "data: [DONE]"
    events = [json.loads(line[len("data: "):]) for line in lines[:-1]]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == "Paris (bottom-up)"
    assert events[-1]["choices"][0]["finish_reason"] == "stop" and events[-1]["kcard_trace"]["answer"]
    assert client.get(f"/v1/traces/{events[-1]['id']}").status_code == 200


@pytest.mark.parametrize("body, status, code", [
    ({"model": "gpt-4", "messages": [{"role": "user", "content": "Hi"}]}, 404, "model_not_found"),
    ({"model": "kcard-bottom-up", "messages": []}, 400, "invalid_messages"),
    ({"model": "kcard-bottom-up", "messages": [{"role": "system", "content": "Be brief."}]}, 400, "invalid_messages"),
    ({"model": "kcard-bottom-up", "messages": [{"role": "user", "content": "Hi"}], "cards": "science"}, 400,
     "invalid_cards"),
])
def test_bad_requests_get_openai_style_errors(client, body, status, code):
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == status and response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert client.post("/v1/chat/completions", content=b"{not json").status_code == 400
    assert client.get("/v1/traces/nope").json()["error"]["code"] == "trace_not_found"


def test_a_server_that_cannot_build_its_chain_says_why_in_openai_style():
    from fastapi.testclient import TestClient

    def build(spec):
        raise RuntimeError("the base LLM's weights are gone")

    response = TestClient(create_app(Server(ChainSpec(), build=build))).post(
        "/v1/chat/completions", json={"model": "kcard-bottom-up", "messages": [{"role": "user", "content": "Hi"}]})
    assert response.status_code == 500
    assert response.json()["error"] == {"message": "RuntimeError: the base LLM's weights are gone",
                                        "type": "server_error", "param": None, "code": None}


def test_a_full_queue_gets_429_and_a_slow_answer_503(client):
    body = {"model": "kcard-bottom-up", "messages": [{"role": "user", "content": "Capital?"}]}
    server = client.server
    server.slots.acquire(), server.slots.acquire()  # two requests already running
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 429 and response.json()["error"]["type"] == "rate_limit_error"
    server.slots.release(), server.slots.release()
    server.timeout = 0.01
    slow = server.chain("kcard-bottom-up", None)
    slow.cards[0].backend.delay = 0.5  # FakeBackend: every generation waits
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 503 and response.json()["error"]["code"] == "timeout"


@pytest.mark.slow
def test_openai_clients_and_kcard_ask_talk_to_a_real_server(kcard_server):
    from langchain_openai import ChatOpenAI
    from openai import NotFoundError, OpenAI

    question = "Who won the senate race of Georgia in the 2022 U.S. midterm elections?"
    client = OpenAI(base_url=f"{kcard_server}/v1", api_key="none")
    reply = client.chat.completions.create(model="kcard-bottom-up", messages=[{"role": "user", "content": question}],
                                           extra_body={"cards": ["midterm2022-news"]})
    assert "Warnock" in reply.choices[0].message.content
    assert reply.model_extra["kcard_trace"]["documents"][0]["card"] == "midterm2022-news"
    streamed = client.chat.completions.create(model="kcard-bottom-up", stream=True, extra_body={"cards": ["midterm2022-news"]},
                                              messages=[{"role": "user", "content": question}])
    assert "Warnock" in "".join(chunk.choices[0].delta.content or "" for chunk in streamed)
    chat = ChatOpenAI(base_url=f"{kcard_server}/v1", api_key="none", model="kcard-bottom-up",
                      extra_body={"cards": ["midterm2022-news"]})
    assert "Warnock" in chat.invoke(question).content
    with pytest.raises(NotFoundError, match="unknown model 'gpt-4'"):
        client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": question}])
    done = subprocess.run([sys.executable, "-m", "kcard_core", "ask", question, "--card", "midterm2022-news", "--json"],
                          capture_output=True, text=True, env={**os.environ, "KCARD_SERVER": kcard_server})
    asked = json.loads(done.stdout)
    assert "Warnock" in asked["answer"] and asked["trace"]["documents"][0]["card"] == "midterm2022-news"


@pytest.mark.slow
def test_a_card_server_killed_mid_request_is_named_and_the_answer_still_comes(tmp_path):
    import signal
    import threading

    from openai import OpenAI

    from conftest import serving
    from kcard_core.models import resolve_model
    from kcard_core.testing import LlamaServer

    with LlamaServer(resolve_model("smollm2-135m-instruct")[1]) as card_server:
        (tmp_path / "config.toml").write_text(f'[cards.general]\nbackend = "openai"\nbase_url = "{card_server.url}"\n'
                                              'timeout = 30\nmax_retries = 1\n')
        with serving("--no-cache", "--n1", "3", KCARD_HOME=str(tmp_path)) as url:
            client = OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0)

            def ask(question: str) -> dict:
                reply = client.chat.completions.create(model="kcard-bottom-up", extra_body={"cards": ["general", "countries"]},
                                                       messages=[{"role": "user", "content": question}])
                return {"answer": reply.choices[0].message.content, **reply.model_extra["kcard_trace"]}

            first = ask("What is the capital of Australia?")  # the remote card writes; every model is warm
            assert first["errors"] == [] and {"openai", "bm25"} <= {doc["backend"] for doc in first["documents"]}
            threading.Timer(1.0, card_server.stop, args=(signal.SIGKILL,)).start()  # while the card is writing
            second = ask("What is the capital of Peru?")
    assert [error["card"] for error in second["errors"]] == ["general"]
    assert "Lima" in second["answer"]  # the countries card's passage still reached the reader
