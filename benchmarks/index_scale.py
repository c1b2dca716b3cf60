"""How a retrieval card's index scales: build, load and query time and peak memory, 1k to 1M passages.

Passages: FOLDOC's entries (the computing card's corpus), repeated past their number with a unique
id each. Candidates, each step in a fresh child process (so that its peak memory is its own):

- kcard: a retrieval card as `kcard new card` makes it (passages.jsonl and its `QuestionIndex`, built by
  bm25s and saved), opened by each process that asks (`Card.index()`, passages read when found);
- bm25s: bm25s with PyStemmer's Snowball English stemmer, built and saved once, then loaded
  memory-mapped (with its passages) by each process that asks;
- fts5: SQLite's FTS5 full-text index (its porter stemmer, BM25 ranking), built into a file once,
  then opened by each process that asks.

Queries: the 200 questions of the real-docs benchmark, top 3 passages each; p50 and p95 latency.

    pip install PyStemmer                        # bm25s's stemmer, for the anchor: not a kcard dependency
    python benchmarks/index_scale.py             # 1k, 10k, 100k and 1M passages
    python benchmarks/index_scale.py --sizes 1000 10000 --dry
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import HERE, write_result

ENGINES = ("kcard", "bm25s", "fts5")
QUESTIONS = HERE / "real_docs"


def questions() -> list[str]:
    return [json.loads(line)["question"] for file in sorted(QUESTIONS.glob("*.questions.jsonl"))
            for line in file.read_text().splitlines()]


def write_passages(size: int, path: Path) -> None:
    from kcard_core.plugins import get_registry

    entries = get_registry().cards["computing"].passages()
    with path.open("w") as out:
        for i in range(size):
            out.write(json.dumps({"text": f"{entries[i % len(entries)]} [entry {i}]"}) + "\n")


def read_passages(path: Path) -> list[str]:
    with path.open() as lines:
        return [json.loads(line)["text"] for line in lines]


def peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def timed_queries(search) -> dict:
    latencies = []
    for question in questions():
        started = time.perf_counter()
        search(question)
        latencies.append(time.perf_counter() - started)
    latencies.sort()
    return {"query_ms_p50": round(1000 * latencies[len(latencies) // 2], 2),
            "query_ms_p95": round(1000 * latencies[int(len(latencies) * 0.95)], 2)}


def child(engine: str, step: str, passages: Path, work: Path) -> dict:
    """One step in this (fresh) process: "build" (and save) or "ask" (load, then the queries)."""
    started = time.perf_counter()
    if engine == "kcard":  # a card package as kcard new card writes it: passages.jsonl and its saved index
        from kcard_core.cards import Card
        from kcard_core.documents import read_passages as read_documents
        from kcard_core.retrieval import QuestionIndex

        card = work / "kcard" / "card.toml"
        if step == "build":
            card.parent.mkdir(exist_ok=True)
            (card.parent / "passages.jsonl").symlink_to(passages)
            QuestionIndex([p.contextual() for p in read_documents(passages, "jsonl")]).save(
                card.parent / "passages.index.npz")
            card.write_text('name = "scale"\ndescription = "FOLDOC"\nversion = "1"\nlicense = "GFDL"\n'
                            'type = "retrieval"\n[artifacts.corpus]\nfile = "passages.jsonl"\n'
                            '[artifacts.index]\nfile = "passages.index.npz"\n')
            return {"build_s": round(time.perf_counter() - started, 2), "peak_mb": peak_mb()}
        retrieval = Card.from_manifest(card)
        retrieval.index()
        loaded = time.perf_counter() - started
        return {"load_s": round(loaded, 2), **timed_queries(retrieval.find), "peak_mb": peak_mb()}
    if engine == "bm25s":
        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        if step == "build":
            texts = read_passages(passages)
            retriever = bm25s.BM25(k1=1.5, b=0.75)
            retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                            show_progress=False)
            retriever.save(work / "bm25s", corpus=texts, show_progress=False)
            return {"build_s": round(time.perf_counter() - started, 2), "peak_mb": peak_mb()}
        retriever = bm25s.BM25.load(work / "bm25s", load_corpus=True, mmap=True, show_progress=False)
        loaded = time.perf_counter() - started

        def search(question: str):
            tokens = bm25s.tokenize(question, stopwords="en", stemmer=stemmer, show_progress=False)
            return retriever.retrieve(tokens, k=3, show_progress=False)

        return {"load_s": round(loaded, 2), **timed_queries(search), "peak_mb": peak_mb()}
    import re
    import sqlite3

    database = work / "fts5.sqlite"
    if step == "build":
        connection = sqlite3.connect(database)
        connection.execute("CREATE VIRTUAL TABLE passages USING fts5(text, tokenize='porter')")
        with passages.open() as lines:
            connection.executemany("INSERT INTO passages (text) VALUES (?)",
                                   ((json.loads(line)["text"],) for line in lines))
        connection.commit()
        connection.close()
        return {"build_s": round(time.perf_counter() - started, 2), "peak_mb": peak_mb()}
    connection = sqlite3.connect(database)
    loaded = time.perf_counter() - started

    def search(question: str):
        words = " OR ".join(f'"{word}"' for word in re.findall(r"\w+", question.lower()))
        return connection.execute("SELECT text FROM passages WHERE passages MATCH ? ORDER BY bm25(passages) "
                                  "LIMIT 3", (words,)).fetchall()

    return {"load_s": round(loaded, 2), **timed_queries(search), "peak_mb": peak_mb()}


def run_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def report(rows: list[dict]) -> str:
    lines = ["| passages | engine | build s | load s (fresh process) | query ms p50 | p95 | peak MB (build) "
             "| peak MB (ask) | index on disk MB | meets the goal |", "|---" * 10 + "|"]
    for r in rows:
        meets = "yes" if r["load_s"] <= 2 and r["query_ms_p50"] <= 50 and r["peak_mb"] <= 2048 else "no"
        lines.append(f"| {r['passages']:,} | {r['engine']} | {r.get('build_s', '–')} | {r['load_s']} "
                     f"| {r['query_ms_p50']} | {r['query_ms_p95']} | {r.get('build_peak_mb', '–')} | {r['peak_mb']} "
                     f"| {r.get('disk_mb', '–')} | {meets} |")
    return f"""# How a retrieval card's index scales

FOLDOC entries (repeated past their 15,247 with a unique id each) as passages; 200 questions (the
real-docs benchmark's), top 3 passages each. Each step in a fresh process on 2 CPU cores. Each engine
builds and saves its index once; a process that asks loads it. kcard: a retrieval card package as
`kcard new card` writes it, opened with `Card.index()` and asked with `Card.find` (coverage and
floor included; passages read from disk when found); bm25s alone (PyStemmer's Snowball stemmer,
memory-mapped); SQLite FTS5 (porter).

Before this index (kcard 2026-11-26), a card's BM25 was rebuilt in every process: at 1M passages
43 s to load, 1,194 ms a query (p50) and 3.1 GB.

{chr(10).join(lines)}

Goal (issue 45): at 1M passages a card loads in ≤ 2 s in a fresh process, answers a query in
≤ 50 ms p50 and stays within 2 GB.

Reproduce: `pip install PyStemmer && python benchmarks/index_scale.py` (`--engine kcard` for one engine).
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--engine", action="append", choices=ENGINES)
    parser.add_argument("--dry", action="store_true")
    parser.add_argument("--report", action="store_true", help="only write the report of the recorded rows")
    parser.add_argument("--child", nargs=4, metavar=("ENGINE", "STEP", "PASSAGES", "WORK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, step, passages, work = args.child
        print(json.dumps(child(engine, step, Path(passages), Path(work))))
        return
    if args.report:
        rows = json.loads((HERE / "results" / "index-scale.json").read_text())["rows"]
        return write_result("index-scale", {"rows": rows}, report(rows))
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            passages = work / "passages.jsonl"
            write_passages(size, passages)
            for engine in args.engine or ENGINES:
                row = {"passages": size, "engine": engine}
                built = run_child(engine, "build", str(passages), str(work))
                row.update(build_s=built["build_s"], build_peak_mb=built["peak_mb"])
                saved = {"kcard": work / "kcard" / "passages.index.npz", "bm25s": work / "bm25s"}.get(
                    engine, work / "fts5.sqlite")
                files = saved.rglob("*") if saved.is_dir() else [saved]
                row["disk_mb"] = round(sum(f.stat().st_size for f in files if f.is_file()) / 2**20, 1)
                row.update(run_child(engine, "ask", str(passages), str(work)))
                print(json.dumps(row), flush=True)
                rows.append(row)
    if not args.dry:  # the rows measured replace those of the same size and engine
        done = {(row["passages"], row["engine"]) for row in rows}
        recorded = json.loads((HERE / "results" / "index-scale.json").read_text())["rows"]
        rows = sorted([r for r in recorded if (r["passages"], r["engine"]) not in done] + rows,
                      key=lambda r: (r["passages"], ENGINES.index(r["engine"])))
        write_result("index-scale", {"rows": rows}, report(rows))


if __name__ == "__main__":
    main()
