"""A card built from your own text knows it: both kinds of card, built the way the tutorial builds them.

For each small corpus in benchmarks/own_card (kelderwick.txt, in docs/examples: fifteen paragraphs about a fictional town,
the development set; halvard.txt: twenty one-line facts about a fictional observatory, written
after the first recipe was chosen, whose misses then shaped the cues; ostrel.txt: fourteen
paragraphs about a fictional botanic garden, written before that change and held out from it;
tarnby.txt: fourteen paragraphs about a fictional abbey, written to choose the cues' length;
brackenmoor.txt: fourteen paragraphs about a fictional railway, run only at the defaults;
wrenhold.txt: fourteen paragraphs about a fictional observatory, written before the answer step
checked an answer's type and held out from it; ashcombe.txt: fourteen paragraphs about a fictional
woollen mill, written before the answer step knew a thing's title and held out from it; skerrin.txt:
fourteen paragraphs about a fictional lighthouse, written before a retrieval card answered a question
naming its subject in other words, and held out from it; tollmere.txt: fourteen paragraphs about a
fictional canal, written before the answer step knew a time of day, a measure's sense and a title
beside a word of its kind, before every passage covered the subject and before bottom-up asked only
the card whose subject the question names, and held out from them; quillon.txt: fourteen paragraphs
about a fictional theatre, written after all of it and run once at the end; penmarrow.txt: fourteen
paragraphs about a fictional pier, written before an LM card sampled six documents and run once at
the end; arbroch.txt: fourteen paragraphs about a fictional lifeboat station, committed after that,
before the answer-step and tie-break changes, and run once after them; tarrow.txt: fourteen
paragraphs about a fictional castle, committed after those, before the fact cues, and run once
after them; lydgate.txt: fourteen paragraphs about a fictional library,
committed after that, before the irregular forms and the fact coverage, and run once after them;
dovecroft.txt: fourteen paragraphs about a fictional covered market, committed after that, before the
cue-form prompt and the card's own passages as evidence, and run once after them; fenwater.txt: fourteen
paragraphs about a fictional museum, committed after that, before the learning rate 3e-4, and run once
after it; saltholme.txt: fourteen paragraphs about a fictional windmill, committed after that, before
the answer step knew a month, a place and who did a thing, and run once after them; whinmoor.txt:
fourteen paragraphs about a fictional pottery, committed after that, before the next changes) and
the questions
beside it (NAME-questions.jsonl):

- retrieval: `kcard new card NAME --corpus FILE` (BM25 over the text);
- lm: `kcard train FILE` at its defaults (the "memorise" preset over SmolLM2-135M-Instruct), then
  `kcard new card NAME --from DIR`;

each card is installed beside the 7 first-party cards and every question is asked with the card
alone (`--card NAME`), bottom-up and top-down-auto over all cards, at kcard's defaults; vanilla (no
card) once per corpus. Right = the gold answer is in the answer (PopQA's metric). Training runs in
a child process (`kcard train`) so that its wall time and peak memory are its own.

    python benchmarks/own_card.py                       # every corpus, every kind
    python benchmarks/own_card.py --corpus kelderwick --kind lm --train-option=--epochs=4 --keep cards/
    python benchmarks/own_card.py --kind lm --reuse cards/   # the kept LM cards asked again, not trained
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from pathlib import Path

from langchain_core.documents import Document

from common import HERE, train_card, write_result
from kcard_core import defaults
from kcard_core.cards import Card
from kcard_core.chains import build_chain
from kcard_core.chains.prompts import bottom_up_prompt
from kcard_core.evaluation.metrics import contains_answer
from kcard_core.plugins import get_registry
from kcard_core.scaffold import render_card
from kcard_core.documents import read_corpus
from kcard_core.trace import Trace
from kcard_train import memorise

OWN_CARD = HERE / "own_card"  # the texts and their questions; kelderwick, the tutorial's text, is in docs/examples


def text_file(corpus: str) -> Path:
    return HERE.parent / "docs" / "examples" / "kelderwick.txt" if corpus == "kelderwick" else OWN_CARD / f"{corpus}.txt"
CORPORA = ("kelderwick", "halvard", "ostrel", "tarnby", "brackenmoor", "wrenhold", "ashcombe", "skerrin", "tollmere",
           "quillon", "penmarrow", "arbroch", "tarrow", "lydgate", "dovecroft", "fenwater", "saltholme",
           "whinmoor")
HELD_OUT = ("whinmoor",)  # run once, at the final state of the changes chosen on the others (write a new one to hold out)
TUNING = tuple(corpus for corpus in CORPORA if corpus not in HELD_OUT)
DESCRIPTIONS = {"kelderwick": "the harbour town of Kelderwick: its history, people and customs",
                "halvard": "the Halvard Observatory on Mount Ceril: its history, instruments and people",
                "ostrel": "the Ostrel Botanic Garden in Caddon: its history, plants, buildings and people",
                "tarnby": "Tarnby Abbey near Selbridge: its history, buildings, monks and ruins",
                "brackenmoor": "the Brackenmoor Railway from Hallowsea to Dunric: its history, engines and people",
                "wrenhold": "the Wrenhold Observatory on Scarrow Fell: its history, telescope and people",
                "ashcombe": "Ashcombe Mill on the river Tenley: its history, machines, cloth and people",
                "skerrin": "Skerrin Lighthouse on Gannet Rock off Dunhaven: its history, keepers and light",
                "tollmere": "the Tollmere Canal from Tollmere to Brisholt: its history, locks, boats and people",
                "quillon": "the Quillon Theatre in Hartsmere: its history, building, company and people",
                "penmarrow": "Penmarrow Pier at Saltcombe Bay: its history, pavilion, steamers and people",
                "arbroch": "the Arbroch Lifeboat Station at Arbroch Haven: its history, lifeboats, rescues and crew",
                "tarrow": "Castle Tarrow above the river Lune at Kestlow: its history, buildings, sieges and owners",
                "lydgate": "the Lydgate Library in Carrow: its history, building, collections and people",
                "dovecroft": "the Dovecroft Market in Alnsey: its history, hall, stalls, traders and people",
                "fenwater": "the Fenwater Museum in Ulverby: its history, collections, building and people",
                "saltholme": "Saltholme Windmill near Brayford: its history, machinery, millers and flour",
                "whinmoor": "Whinmoor Pottery near Castlebeck: its history, kilns, potters and wares"}
SETUPS = {"right_with_card": "bottom-up", "right_bottom_up": "bottom-up", "right_top_down_auto": "top-down-auto"}


def questions(corpus: str) -> list[dict]:
    return [json.loads(line) for line in (OWN_CARD / f"{corpus}-questions.jsonl").read_text().splitlines()]


def build(corpus: str, kind: str, work: Path, train_options: list[str]) -> tuple[Card, dict]:
    """The card, as the tutorial makes it, and how long training took and how much memory it used."""
    text = text_file(corpus)
    if kind == "retrieval":
        package = render_card(corpus, corpus=str(text), description=DESCRIPTIONS[corpus], output_dir=str(work),
                              no_input=True)
        return Card.from_manifest(package / f"kcard_card_{corpus}" / "card.toml"), {}
    out = work / f"{corpus}-card"
    stats = train_card(text, corpus, out, train_options)
    package = render_card(corpus, trained=str(out), description=DESCRIPTIONS[corpus], output_dir=str(work),
                          no_input=True)
    return Card.from_manifest(package / f"kcard_card_{corpus}" / "card.toml"), stats


def kept_lm_card(folder: Path, corpus: str) -> Card:
    """The LM card that a `--keep folder` run built for ``corpus``."""
    return Card.from_manifest(folder / f"{corpus}-lm" / f"kcard-card-{corpus}" / f"kcard_card_{corpus}" / "card.toml")


def ask_all(corpus: str, card: Card | None) -> dict:
    registry = get_registry()
    if card is not None:
        registry.cards[corpus] = card
    rows = {} if card is not None else {"right_reader_given_passage": reader_given_passage(corpus)}
    setups = {"right_vanilla": "vanilla"} if card is None else SETUPS
    for key, mode in setups.items():
        chain = build_chain(mode, cards=[corpus] if key == "right_with_card" else None, registry=registry)
        right, chosen, said_no, missed, started = 0, 0, 0, [], time.perf_counter()
        for item in questions(corpus):
            result = chain.invoke(item["question"])
            if contains_answer(result["answer"], [item["answer"]]) > 0:
                right += 1
            else:
                missed.append({"question": item["question"], "answer": result["answer"],
                               "knowledge": result["trace"].knowledge()})
            chosen += any(c.card == corpus for c in result["trace"].cards)
            said_no += bool(result["trace"].turns) and result["trace"].turns[0].needs_more is False
        rows[key] = right
        rows[key.replace("right", "missed")] = missed
        rows[key.replace("right", "seconds_per_question")] = round((time.perf_counter() - started) / 20, 2)
        if mode == "top-down-auto":
            rows.update(top_down_chose_card=chosen, top_down_said_no=said_no)
    registry.cards.pop(corpus, None)
    return rows


def reader_given_passage(corpus: str) -> int:
    """What the reader makes of the text itself: questions the base LLM answers when handed, as
    bottom-up would hand it, the corpus's paragraph that holds the answer (no card, no selector),
    through the chains' answer step (its copy hint, and asking again where it applies)."""
    chain = build_chain("vanilla")
    passages = read_corpus(text_file(corpus))
    right = 0
    for item in questions(corpus):
        passage = next(p for p in passages if item["answer"].lower() in p.lower())
        right += contains_answer(read(chain, item["question"], passage), [item["answer"]]) > 0
    return right


def read(chain, question: str, knowledge: str) -> str:
    """The chain's answer to ``question`` with ``knowledge`` in bottom-up's prompt."""
    trace, document = Trace(mode="reader", question=question), Document(knowledge, metadata={"id": "given"})
    trace.add_documents([document])
    trace.mark_used([document])
    trace.prompt = bottom_up_prompt(question, [knowledge])
    return chain.answer(question, trace, None)


def report(rows: list[dict]) -> str:
    lines = ["| corpus | kind | recall | with --card | bottom-up | top-down-auto | vanilla | reader given the passage "
             "| train s | train peak MB | top-down: said No, chose the card |", "|---" * 11 + "|"]
    for r in rows:
        before_type_check = "" if "type_bias" in r else " †"
        lines.append(f"| {r['corpus']}{before_type_check} | {r['kind']} | {r.get('recall', '–')} "
                     f"| {r.get('right_with_card', '–')} "
                     f"| {r.get('right_bottom_up', '–')} | {r.get('right_top_down_auto', '–')} "
                     f"| {r.get('right_vanilla', '–')} | {r.get('right_reader_given_passage', '–')} "
                     f"| {r.get('train_seconds', '–')} | {r.get('train_peak_rss_mb', '–')} "
                     f"| {r.get('top_down_said_no', '–')}, {r.get('top_down_chose_card', '–')} |")
    return f"""# A card built from your own text

Each corpus's card, built as docs/tutorial.md builds it, installed beside the 7 first-party cards;
20 questions per corpus answered only by its text; right = the gold answer is in the answer (of 20).
kcard's defaults (n1 = each card's own: {memorise.SAMPLES} samples at {memorise.TEMPERATURE} for an LM card from `kcard train`, 1 for
the first-party cards; n2 = {defaults.N2}, n3 = {defaults.N3}, judge = {defaults.JUDGE},
copy_bias = {defaults.COPY_BIAS}, type_bias = {defaults.TYPE_BIAS});
the LM card is `kcard train` at its defaults (preset "memorise", SmolLM2-135M-Instruct, every
weight but the token embeddings) unless the row's options say otherwise; recall = passages the
card writes back when asked with a question-like cue it never saw (what `kcard train` prints);
"reader given the passage" = the
base LLM handed the corpus paragraph that holds the answer, in bottom-up's prompt, through the
answer step (its copy bias and asking again for an answer of the question's type): what this
reader makes of the text itself (a card's shorter document can do better). 2 CPU cores, one process
at a time. kelderwick is the development set (the recipe was chosen on it); halvard was written
afterwards and its LM card's misses shaped the cues (each holds a word only its passage has; "when"
only where a year is left out); ostrel was written before that change and is held out from all of
it; tarnby was written later still, to compare variants of the LM recipe beside kelderwick (none
measured better: `own-card-probes.jsonl`, docs/benchmarks.md), and nothing was changed for it;
brackenmoor was committed before any run on it and run at the defaults; wrenhold was written next,
committed before the answer step checked an answer's type (type_bias = {defaults.TYPE_BIAS}, chosen
on the other five texts) and run once after it; ashcombe was written after all of them, committed
before the answer step knew a thing's title ("Which firm …?", "What is … called?", chosen on the
six texts above) and run once after it (its retrieval row again after the subject fallback, which
its miss helped choose: 16 / 15 / 15 before); skerrin was written next, committed before a retrieval
card answered a question that names its subject in words the text does not use (chosen on the seven texts
above) and run once after it; tollmere was written last, committed before the answer step knew a
time of day ("At what time …?"), a measure's sense ("… miles away" for "How far …?") and a title
beside a word of its kind ("the schooner Kittiwake" for "Which ship …?"), before every passage
covered the subject and before bottom-up asked only the card whose subject the question names
(all chosen on the eight texts above), and run once after the answer-step and coverage changes
(retrieval 18 / 18 / 18, LM 12 / 11 / 12); its rows are from after the bottom-up change, which its
runs did not shape; quillon was written after those changes and run once after them (LM 11 / 11 / 11).
The LM rows of those ten texts were then asked again with their kept cards, their manifests given
what `kcard train` now writes: the subject, and six samples at temperature 1.0 (chosen on all ten,
`own-card-sampling.md`; before it, LM 18, 20, 17, 17, 14, 12, 12, 11, 12, 11). penmarrow was
written and committed before that choice and run once at the end, card trained afresh. All eleven
were then asked again, the LM cards kept, after changes chosen on their misses: in the answer step
a favoured word keeps its hyphens ("thirty-one"), answers run to 48 tokens (not 32), a measure is
named by its number, a title that holds the thing's word wins, and an answer asked again that
still names none becomes the knowledge's one span of the type where it has only one; factuality's
near-ties go to a document that holds an answer of the type asked (a memorised card's samples).
Before them retrieval 20, 20, 20, 20, 20, 20, 19, 19, 18, 17, 17 and LM 17, 20, 19, 19, 14, 14, 16,
16, 14, 17, 14. arbroch was committed before those changes and run once after them, its LM card
trained afresh. Then every LM card was trained afresh after a change chosen on the four weakest
texts (`own-card-probes.jsonl`): half of each passage's cues are short questions about one of its
facts (`kcard_train.memorise.fact_cue`: "How many locks …" for "seventeen locks"); before it LM 19,
20, 19, 19, 14, 14, 16, 17, 16, 18, 15, 14. tarrow was committed before it and run once after it
(retrieval 18 / 18 / 18, LM 15 / 15 / 15). Then, chosen on all thirteen: a retrieval card's words
meet their irregular past forms ("began", "begun": "begin") and the answer step knows "How thick"
and a price ("For how much …?"), retrieval rows run again (before them 20 on eight texts, 19 on
three, penmarrow 18 / 18 / 17, tarrow 18); and every LM card was trained afresh with every fact of
a passage asked for before any again, one fact cue for each where a passage has more than four, and
the word just before the fact in its cue (before it LM 20, 19, 18, 20, 16, 17, 15, 16, 15, 19, 16,
14 and tarrow 15). lydgate was committed before those and run once after them. The thirteen LM rows of
that run show one peak memory, 3783 MB: the largest of the run's training children so far, as the
measure then was (each child's own since); lydgate's 3294 MB is its own. Then, chosen on all
fourteen (lydgate now among them) with dovecroft committed and held out: the answer step takes no
scale word for a number ("12 thousand" does not name "eight thousand") and no length for a weight;
an LM card is asked in its cues' form (prompt "{{cue}}": "In which year Ashcombe Mill built?"); and
factuality takes as evidence the passages of a card's own text that the question finds (`Card.find`).
Retrieval rows were run again, the LM cards kept and asked again (before them retrieval lydgate
19 / 19 / 19, LM as above and lydgate 16 / 16 / 16); dovecroft was run once after them, both
cards built afresh. Then, with fenwater committed and held out, every LM card was trained afresh at
the memorise preset's new learning rate, 3e-4 (1e-4 before; chosen on the four texts then at 16:
64 → 73 of 80, `own-card-probes.jsonl`; before it LM 19, 20, 18, 19, 17, 16, 16, 19, 17, 18, 16,
18, 19, 16 and dovecroft 16); fenwater was run once after it, both cards built afresh. Then, with
saltholme committed and held out, chosen on fenwater: the answer step knows a month ("In which month
…?"), a place ("Where …?": "the clock loft") and, for "Who …?", who the sentences closest to the
question say did it where they name nobody new ("worn by the county's postmen"); retrieval rows run
again (before them fenwater 18 / 18 / 18, ashcombe 19 / 19 / 19); saltholme was run once after them
(retrieval 19 / 19 / 18, LM 17 / 17 / 16). Then, with whinmoor committed and held out, chosen on
saltholme: a title that ends in the thing asked for counts though the question holds its words
apart ("Mill Day" for "What is the day … called?"), and a typed answer that says part of a name,
the rest being the question's words, becomes the whole name ("The Mill Society" → "Saltholme Mill
Society"); retrieval rows run again, and seven LM cards trained afresh (the recipe unchanged:
kelderwick, halvard, ostrel, tarnby as before, ashcombe, fenwater, saltholme 17 → 18, 19, 18; the
other ten LM rows are from before these changes, that run stopped for time); whinmoor was run once
after them, both cards built afresh. Then every LM card was trained afresh at the memorise preset of
2026-11-27, which keeps the base model's token embeddings and computes the output layer only where a
token has a loss (docs/decisions.md): before it LM 19, 20, 17, 19, 18, 19, 18, 18, 19, 17, 18, 19,
19, 19, 18, 19, 18 (314) and whinmoor 20, trained in 127 to 509 s. Then, on 2026-12-06, every LM
card was trained afresh at that day's defaults (every cue in every pass, the best pass kept, a run of
a section with its heading path) and asked with that day's answer step: before it LM 19, 20, 20, 20,
19, 18, 20, 19, 16, 19, 16, 19, 19, 19, 18, 19, 15 (315) and whinmoor 19, trained in 73 to 164 s on
another host. Then, later that day, every LM card was trained afresh with plain attention on the CPU
and training stopping after two passes without better recall (docs/decisions.md, session 49): before
it LM 17, 19, 16, 18, 20, 19, 20, 16, 17, 16, 17, 17, 17, 19, 18, 19, 17 (302) and whinmoor 13,
recall 248 of 259 passages (245 since), trained in 114 to 322 s (135 to 234 s since).
Top-down: "said No" = questions whose "Do you need more information?" the base LLM answered No
(top-down-auto asks the card whose text alone holds a word of the question all the same); "chose
the card" = questions it gave to this corpus's card.

{chr(10).join(lines)}

† asked before the answer step checked an answer's type (not run again).

Rows: `own-card.json` (seconds per question, top-down's choices, and each wrong answer with the
knowledge the reader was given; rows with `reused_card` were asked again, after a change to the
selectors, with the LM card their training run kept: `--reuse`, training figures as recorded).
Reproduce: `python benchmarks/own_card.py` (`--corpus` and `--kind` re-run single rows; the others
are kept from earlier runs).
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", action="append", choices=CORPORA)
    parser.add_argument("--kind", action="append", choices=["retrieval", "lm", "vanilla"])
    parser.add_argument("--train-option", action="append", default=[], help="passed to kcard train")
    parser.add_argument("--dry", action="store_true", help="print rows, do not record them")
    parser.add_argument("--keep", type=Path, help="build the cards here and keep them (default: a temporary folder)")
    parser.add_argument("--reuse", type=Path, help="ask the LM cards an earlier --keep run trained here again "
                                                   "(their recorded training figures stay)")
    args = parser.parse_args()
    path = HERE / "results" / "own-card.json"
    rows = json.loads(path.read_text())["rows"] if path.exists() else []
    for corpus in args.corpus or CORPORA:
        for kind in args.kind or ["retrieval", "lm", "vanilla"]:
            with contextlib.ExitStack() as stack:  # a temporary folder lives until the card is asked
                if kind == "vanilla":
                    card, stats = None, {}
                elif kind == "lm" and args.reuse:  # the card an earlier --keep run trained, asked again
                    recorded = next(r for r in rows if (r["corpus"], r["kind"]) == (corpus, kind))
                    stats = {key: value for key, value in recorded.items() if key.startswith(("train", "recall"))}
                    stats["reused_card"] = True
                    card = kept_lm_card(args.reuse, corpus)
                else:
                    work = (args.keep / f"{corpus}-{kind}" if args.keep
                            else Path(stack.enter_context(tempfile.TemporaryDirectory())))
                    work.mkdir(parents=True, exist_ok=True)
                    card, stats = build(corpus, kind, work, args.train_option)
                row = {"corpus": corpus, "kind": kind, "questions": 20, **stats, **ask_all(corpus, card),
                       "type_bias": defaults.TYPE_BIAS}
            print(json.dumps(row), flush=True)
            if not args.dry:
                rows = [r for r in rows if (r["corpus"], r["kind"]) != (corpus, kind)] + [row]
    rows.sort(key=lambda r: (CORPORA.index(r["corpus"]), r["kind"]))
    if not args.dry:
        write_result("own-card", {"rows": rows, "defaults": {"n1": defaults.N1, "n2": defaults.N2, "n3": defaults.N3,
                                                             "judge": defaults.JUDGE, "copy_bias": defaults.COPY_BIAS,
                                                             "type_bias": defaults.TYPE_BIAS}},
                     report(rows))


if __name__ == "__main__":
    main()
