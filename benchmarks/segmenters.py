"""Sentence segmenters compared: the old ". " split, sentencex (kcard's), pysbd and blingfire.

On the midterm news corpus (every report should be one sentence) and on hand-written cases of what
cards write (abbreviations, initials, decimals, quotes, titles). Needs `pip install pysbd blingfire`
beside kcard.

    python benchmarks/segmenters.py
"""

from __future__ import annotations

import re
import time

from common import write_result

from kcard_card_midterm2022.corpus import news_corpus

# (text, its sentences): the kinds of text cards write
CASES = [
    ("In the Idaho senate race in the 2022 U.S. midterm elections, Mike Crapo defeated David Roth.", 1),
    ("Mike D. Rogers won the race. He was re-elected.", 2),
    ("Dr. Smith lives on St. James St. in London. He is a doctor.", 2),
    ("The population grew by 3.5 percent in 2020. It was 4.2 million.", 2),
    ('He said "It is over." Then he left.', 2),
    ("“It is over,” he said. Then he left.", 2),
    ("J. R. R. Tolkien wrote The Hobbit. It was published in 1937.", 2),
    ("The U.S. Senate has 100 members. Each state has two.", 2),
    ("Washington, D.C. is the capital of the U.S. It lies on the Potomac River.", 2),
    ("Mr. Jones met Mrs. Brown at 5 p.m. on Friday. They talked.", 2),
    ("Is it true? Yes! It is.", 3),
    ("Sen. Raphael Warnock defeated Herschel Walker in Georgia. Gov. Brian Kemp won too.", 2),
    ("Apple Inc. is based in Cupertino. It makes phones.", 2),
    ("The vote was 52 vs. 48 percent. Turnout was high.", 2),
    ("He won e.g. Ohio and Iowa. She won Maine.", 2),
    ("Rep. Mary Peltola won Alaska's at-large seat. She is a Democrat.", 2),
    ("The race was close... Kemp won. Abrams conceded.", 3),
    ("Results came in at 11 p.m. Warnock led.", 2),
    ("The No. 1 seed won. It was a surprise.", 2),
    ("Paris is in France. london is in England.", 2),
    ("The capital is Canberra", 1),
    ("He moved to the U.S.A. in 1990. He became a citizen.", 2),
]


def splitters() -> dict:
    import blingfire
    import pysbd

    from kcard_core.text import sentences

    segmenter = pysbd.Segmenter(language="en", clean=False)
    return {
        "'. ' split (kcard before)": lambda t: [p for p in re.split(r"(?<=[.!?])\s+", t.strip()) if p],
        "sentencex (kcard now)": sentences,
        "pysbd": lambda t: [s.strip() for s in segmenter.segment(t) if s.strip()],
        "blingfire": lambda t: [s for s in blingfire.text_to_sentences(t).split("\n") if s.strip()],
    }


def main() -> None:
    corpus = news_corpus()
    rows = []
    for name, split in splitters().items():
        started = time.perf_counter()
        pieces = sum(len(split(passage)) for passage in corpus)
        seconds = time.perf_counter() - started
        wrong = [text for text, count in CASES if len(split(text)) != count]
        rows.append({"segmenter": name, "corpus_passages": len(corpus), "corpus_sentences": pieces,
                     "cases_right": len(CASES) - len(wrong), "cases": len(CASES), "wrong": wrong,
                     "ms_per_passage": round(1000 * seconds / len(corpus), 3)})
    lines = ["| segmenter | news reports → sentences (each is one) | cases right | ms / report |", "|---|---|---|---|"]
    lines += [f"| {r['segmenter']} | {r['corpus_passages']} → {r['corpus_sentences']} | {r['cases_right']} / {r['cases']} "
              f"| {r['ms_per_passage']} |" for r in rows]
    misses = "\n".join(f"- {r['segmenter']}: " + "; ".join(f"`{w}`" for w in r["wrong"]) for r in rows if r["wrong"])
    report = f"""# Sentence segmenters

Every midterm news report is one sentence; the cases are what cards write (abbreviations, initials,
decimals, quotes, titles). kcard uses sentencex: right on every case, maintained, no dependencies,
and the fastest here.

{chr(10).join(lines)}

Missed cases:
{misses}

Reproduce: `python benchmarks/segmenters.py` (with `pip install pysbd blingfire`).
"""
    write_result("segmenters", {"rows": rows}, report)


if __name__ == "__main__":
    main()
