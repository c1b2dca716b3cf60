"""A card that knows your own text survives beside every first-party card.

A retrieval card over docs/examples/kelderwick.txt (fifteen paragraphs about a fictional town) is
registered beside the 7 first-party cards; 20 questions whose answers are only in that text are
asked with the card alone (`--card kelderwick`), bottom-up and top-down-auto over all cards, and
with no card (vanilla), all at the defaults. Goal: no loss against the card alone. Right = the
gold answer appears in the answer (PopQA's metric).

    python benchmarks/private_domain.py
"""

from __future__ import annotations

import time

from common import HERE, write_result

from kcard_core import defaults
from kcard_core.cards import Card
from kcard_core.chains import build_chain
from kcard_core.evaluation.metrics import contains_answer
from kcard_core.plugins import get_registry

QUESTIONS = [
    ("Who founded Kelderwick?", "Ada Morrane"),
    ("In which year was Kelderwick founded?", "1742"),
    ("On which island is the town of Kelderwick?", "Varrow"),
    ("What was the name of the ship of Kelderwick's founder?", "Grey Heron"),
    ("Who is the mayor of Kelderwick?", "Oskar Fenn"),
    ("In which year was the mayor of Kelderwick first elected?", "2021"),
    ("What is the oldest boatyard in Kelderwick?", "Morrane Boatyard"),
    ("In which year was the Kelderwick lighthouse built?", "1810"),
    ("On which headland does the Kelderwick lighthouse stand?", "Tollan Head"),
    ("What is the name of Kelderwick's night race of sailing boats?", "Lantern Regatta"),
    ("In which year was Kelderwick's first Lantern Regatta held?", "1888"),
    ("Which river runs through Kelderwick?", "Sabre"),
    ("In which hills does the river of Kelderwick rise?", "Ellow Hills"),
    ("What does the Kelderwick dialect call a small boat?", "skerrit"),
    ("Where does Kelderwick Harbour FC play its games?", "Quayside Ground"),
    ("What is Kelderwick's best-known dish?", "tollan stew"),
    ("To which island does the ferry from Kelderwick sail?", "Merrin"),
    ("How long is the ferry crossing from Kelderwick to Merrin?", "ninety minutes"),
    ("What is the name of Kelderwick's school?", "Morrane Academy"),
    ("Which poet was born in Kelderwick in 1903?", "Lira Astwell"),
]
MANIFEST = f"""name = "kelderwick"
description = "the harbour town of Kelderwick: its history, people and customs"
version = "1"
license = "CC0"
type = "retrieval"
[artifacts.corpus]
file = "{HERE.parent / 'docs' / 'examples' / 'kelderwick.txt'}"
"""


def main() -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "card.toml").write_text(MANIFEST)
        card = Card.from_manifest(Path(folder) / "card.toml")
        registry = get_registry()
        registry.cards["kelderwick"] = card
        setups = {"card alone (--card kelderwick)": ("bottom-up", ["kelderwick"]),
                  "bottom-up, all cards": ("bottom-up", None), "top-down-auto, all cards": ("top-down-auto", None),
                  "vanilla (no card)": ("vanilla", None)}
        rows = []
        for name, (mode, cards) in setups.items():
            chain = build_chain(mode, cards=cards, registry=registry)
            right, chosen, started = 0, [], time.perf_counter()
            for question, gold in QUESTIONS:
                result = chain.invoke(question)
                right += contains_answer(result["answer"], [gold]) > 0
                chosen += [c["card"] for c in result["trace"].cards] if mode == "top-down-auto" else []
            rows.append({"setup": name, "right": right, "questions": len(QUESTIONS),
                         "seconds_per_question": round((time.perf_counter() - started) / len(QUESTIONS), 2),
                         **({"kelderwick chosen": chosen.count("kelderwick")} if mode == "top-down-auto" else {})})
            print(rows[-1], flush=True)
    lines = ["| setup | right of 20 | s / question |", "|---|---|---|"] + [
        f"| {r['setup']} | {r['right']} | {r['seconds_per_question']} |" for r in rows]
    td = next(r for r in rows if r["setup"].startswith("top-down"))
    report = f"""# A private-domain card beside every first-party card

A retrieval card over `docs/examples/kelderwick.txt`, registered beside the 7 first-party cards;
20 questions answered only by that text; defaults (n1 = {defaults.N1}, n2 = {defaults.N2},
n3 = {defaults.N3}, judge = {defaults.JUDGE}); right = the gold answer is in the answer.

{chr(10).join(lines)}

Top-down-auto chose the kelderwick card for {td.get('kelderwick chosen', 0)} of 20 questions.

Reproduce: `python benchmarks/private_domain.py`
"""
    write_result("private-domain", {"rows": rows, "defaults": {"n1": defaults.N1, "n2": defaults.N2,
                                                                "n3": defaults.N3, "judge": defaults.JUDGE}}, report)


if __name__ == "__main__":
    main()
