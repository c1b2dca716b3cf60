"""P6: asking through `kcard serve`, models warm: one client's latency, then 32 concurrent clients.

A real `kcard serve --no-cache` process (defaults: bottom-up, every first-party card; no generation
cache, so every question makes its cards write) is started; one request warms it. Then one client
asks --sequential MidtermQA held-out questions one after another, and --clients clients ask
--per-client questions each at once (the openai client, over HTTP). Reported: latency p50 / p95,
requests per second, and how many failed. Run alone.

    .venv/bin/python benchmarks/serve_load.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from common import write_result

from kcard_core.evaluation.datasets import load_dataset
from kcard_core.testing import free_port

GOAL_WARM = 3.0  # seconds per warm ask (issue 20)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequential", type=int, default=10)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--per-client", type=int, default=2)
    args = parser.parse_args()
    from openai import OpenAI

    questions = [e.question for e in load_dataset("midterm-openbook").examples[100:]]  # held-out: 101-505
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "kcard_core", "serve", "--port", str(port), "--no-cache",
                               "--max-queue", str(args.clients * args.per_client)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        started = time.perf_counter()
        while True:
            try:
                urllib.request.urlopen(f"{url}/v1/models", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        up = time.perf_counter() - started
        client = OpenAI(base_url=f"{url}/v1", api_key="none", timeout=600, max_retries=0)

        errors: list[str] = []

        def ask(question: str) -> tuple[float, bool]:
            began = time.perf_counter()
            try:
                reply = client.chat.completions.create(model="kcard-bottom-up",
                                                       messages=[{"role": "user", "content": question}])
                ok = bool(reply.choices[0].message.content)
            except Exception as error:  # counted as failed, and why
                errors.append(f"{type(error).__name__}: {error}"[:300])
                ok = False
            return time.perf_counter() - began, ok

        first = ask(questions[0])[0]
        one = [ask(q) for q in questions[1:1 + args.sequential]]
        one_seconds = sum(t for t, _ in one)
        batch = questions[1 + args.sequential:1 + args.sequential + args.clients * args.per_client]
        began = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            many = list(pool.map(ask, batch))
        many_seconds = time.perf_counter() - began
    finally:
        server.terminate()
        server.wait(timeout=30)
    rows = {"server_up_seconds": round(up, 2), "first_request_seconds": round(first, 2),
            "one_client": {"requests": len(one), "p50": percentile([t for t, _ in one], 0.5),
                           "p95": percentile([t for t, _ in one], 0.95), "failed": sum(not ok for _, ok in one),
                           "requests_per_second": round(len(one) / one_seconds, 3)},
            "concurrent": {"clients": args.clients, "requests": len(many), "p50": percentile([t for t, _ in many], 0.5),
                           "p95": percentile([t for t, _ in many], 0.95), "failed": sum(not ok for _, ok in many),
                           "requests_per_second": round(len(many) / many_seconds, 3)},
            "errors": errors}
    warm = rows["one_client"]["p50"]
    speedup = round(rows["concurrent"]["requests_per_second"] / rows["one_client"]["requests_per_second"], 2)
    markdown = f"""# P6: asking through `kcard serve`

A real `kcard serve --no-cache` process on 2 CPU cores (bottom-up, every first-party card, Gemma 3
270M reading; no generation cache: every question makes its cards write), MidtermQA held-out
questions, the openai client over HTTP. The server answered /v1/models {rows['server_up_seconds']} s
after it started (models load on the first question: {rows['first_request_seconds']} s).

| clients | requests | p50 s | p95 s | requests/s | failed |
|---|---|---|---|---|---|
| 1 (one after another) | {len(one)} | {rows['one_client']['p50']} | {rows['one_client']['p95']} | {rows['one_client']['requests_per_second']} | {rows['one_client']['failed']} |
| {args.clients} at once | {len(many)} | {rows['concurrent']['p50']} | {rows['concurrent']['p95']} | {rows['concurrent']['requests_per_second']} | {rows['concurrent']['failed']} |

Warm ask goal ≤ {GOAL_WARM} s: {'met' if warm <= GOAL_WARM else 'missed'} (p50 {warm} s). Concurrent requests
share the models' decodes: a request for a model that is busy joins its running decode
(docs/backends.md, "Batched decoding"), so {args.clients} clients get {speedup}× one client's requests
per second; nothing is dropped while the queue has room (`--max-queue`).

Reproduce: `.venv/bin/python benchmarks/serve_load.py`
"""
    write_result("serve-load", {"args": vars(args), **rows}, markdown)


if __name__ == "__main__":
    main()
