"""Cards from real documents, used as they ship: does a retrieval card built from a user's file know it?

Thirty-one documents nobody here wrote, of different shapes (benchmarks/real_docs/sources.py takes
each from where it is installed on these machines: NEWS files, a Debian changelog, man pages as text
and as PDF, HTML manual pages and a folder of them, Markdown and reST READMEs with changelogs), each
with 20 questions whose answers need its structure (a release, a date, the section a fact is under, a
table cell) as well as its sentences (benchmarks/real_docs/NAME.questions.jsonl, written before the
changes they measure). Eighteen are for tuning; thirteen are held out, run once after the changes
(sources.py says which, and when each was written).

For each, `kcard new card NAME --corpus FILE` at its defaults (no --description, no --subject:
what kcard proposes) is installed beside the first-party cards and every question is asked with the
card alone (`--card NAME`), bottom-up and top-down-auto over all cards; vanilla (no card) once per
document. Right = a gold answer is in the answer (PopQA's metric).

    python benchmarks/real_docs.py                          # every tuning document
    python benchmarks/real_docs.py --doc mpfr-news --mode card   # one row, --card only
    python benchmarks/real_docs.py --split held-out         # the held-out documents (once)
    python benchmarks/real_docs.py --format paragraphs --dry     # the passages as blank-line paragraphs
    python benchmarks/real_docs.py --doc mpfr-news --kind lm --keep DIR   # an LM card, kept; --trained DIR asks it again
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from common import HERE, train_card, write_result
from kcard_core.cards import Card
from kcard_core.chains import build_chain
from kcard_core import documents
from kcard_core.evaluation.metrics import contains_answer
from kcard_core.plugins import get_registry
from kcard_core.scaffold import render_card

sys.path.insert(0, str(HERE / "real_docs"))
from sources import SOURCES, extract, files  # noqa: E402

QUESTIONS = HERE / "real_docs"
MODES = {"card": "bottom-up", "bottom_up": "bottom-up", "top_down_auto": "top-down-auto"}


def questions(document: str) -> list[dict]:
    return [json.loads(line) for line in (QUESTIONS / f"{document}.questions.jsonl").read_text().splitlines()]


def build(document: str, file: Path, work: Path, format: str) -> tuple[Card, dict]:
    """The retrieval card a user gets from the document at kcard's defaults, and what building it took."""
    name = SOURCES[document][3]
    started = time.perf_counter()
    package = render_card(name, corpus=str(file), corpus_format=format, output_dir=str(work), no_input=True)
    card = Card.from_manifest(package / f"kcard_card_{name.replace('-', '_')}" / "card.toml")
    card.index()  # built here, so that its time is in build_seconds
    return card, {"build_seconds": round(time.perf_counter() - started, 2), "passages": len(card.passages()),
                  "subject": card.manifest.retrieval.subject, "description": card.manifest.description}


def train(document: str, file: Path, work: Path, trained: Path | None = None) -> tuple[Card, dict]:
    """The LM card a user gets from the document: `kcard train FILE` at its defaults, then
    `kcard new card NAME --from DIR` (the description and subject kcard train proposes). With
    ``trained``: the card kept there by an earlier run (--keep), its training figures from its manifest."""
    name = SOURCES[document][3]
    if trained is None:
        trained, stats = work / "trained", train_card(file, name, work / "trained")
    else:
        figures = tomllib.loads((trained / "card.toml").read_text())["training"]
        stats = {"train_seconds": figures["seconds"], "recall": figures["recall"], "train_steps": figures["steps"],
                 "recall_by_epoch": figures.get("recall_by_epoch"), "train_peak_rss_mb": round(figures["peak_gb"] * 1024)}
    package = render_card(name, trained=str(trained), output_dir=str(work), no_input=True)
    card = Card.from_manifest(package / f"kcard_card_{name.replace('-', '_')}" / "card.toml")
    return card, {**stats, "subject": card.manifest.retrieval.subject, "description": card.manifest.description}


def ask(document: str, card: Card | None, modes: list[str]) -> dict:
    registry = get_registry()
    if card is not None:
        registry.cards[card.name] = card
    items, row = questions(document), {}
    for key in (["vanilla"] if card is None else modes):
        chain = build_chain(MODES.get(key, "vanilla"), registry=registry,
                            cards=[card.name] if key == "card" else None)
        right, missed, chose, started = 0, [], 0, time.perf_counter()
        for item in items:
            result = chain.invoke(item["question"])
            if contains_answer(result["answer"], item["answers"]) > 0:
                right += 1
            else:
                missed.append({"question": item["question"], "gold": item["answers"], "answer": result["answer"],
                               "needs": item["needs"], "knowledge": result["trace"].knowledge()[:600]})
            chose += card is not None and any(c.card == card.name for c in result["trace"].cards)
        row[f"right_{'with_card' if key == 'card' else key}"] = right
        row[f"missed_{key}"] = missed
        row[f"query_seconds_{key}"] = round((time.perf_counter() - started) / len(items), 2)
        if key == "top_down_auto":
            row["top_down_chose_card"] = chose
    if card is not None:
        registry.cards.pop(card.name, None)
    return row


def read_wrong(missed: list[dict]) -> int:
    """Misses whose knowledge held a gold answer: the reader's, not retrieval's."""
    return sum(any(gold.lower() in m["knowledge"].lower() for gold in m["gold"]) for m in missed)


def report(rows: list[dict]) -> str:
    lines = ["| document | card | format | split | passages | with --card | bottom-up | top-down-auto | vanilla "
             "| --card misses with the answer in the knowledge | build (train) s | s / question (card, bottom-up, "
             "top-down) |", "|---" * 12 + "|"]
    vanilla = {r["document"]: r.get("right_vanilla", "–") for r in rows if r["kind"] == "vanilla"}
    for r in (r for r in rows if r["kind"] != "vanilla"):
        seconds = ", ".join(str(r.get(f"query_seconds_{key}", "–")) for key in MODES)
        lines.append(f"| {r['document']} | {r['kind']} | {r['format']} | {r['split']} | {r.get('passages', '–')} "
                     f"| {r.get('right_with_card', '–')} | {r.get('right_bottom_up', '–')} "
                     f"| {r.get('right_top_down_auto', '–')} | {vanilla.get(r['document'], '–')} "
                     f"| {read_wrong(r.get('missed_card', []))} of {len(r.get('missed_card', []))} "
                     f"| {r['train_seconds'] or r.get('build_seconds', '–')} | {seconds} |")
    return f"""# Cards from real documents

Thirty-six real documents used as they ship (benchmarks/real_docs/sources.py), 20 questions each
(right of 20: a gold answer is in the answer); libffi-manual is a folder of HTML pages, given as the
corpus whole. A retrieval card is built from each at kcard's defaults (`kcard new card NAME --corpus
FILE`, the subject and description kcard proposes) and installed beside every first-party card;
asked with `--card NAME`, bottom-up and top-down-auto over all cards; vanilla is the base LLM alone.
Seventeen ship compressed or as a man page's roff source: the cards here are built from the
decompressed file and from groff's text, and kcard reads the files as they ship (`NEWS.gz`,
`grep.1.gz`) into the same passages (`python benchmarks/real_docs/sources.py --as-shipped`); the
last six, diffutils' `NEWS.gz`, bzip2's `bzip2.1.gz` and four GNU Info manuals (`time.info.gz`,
`bc.info.gz`, `ed.info.gz`, `rluserman.info.gz`), are given as they ship.
2 CPU cores, one process at a time; the rows run after the sentence change of 2026-12-07 (make-news
and seven held-out documents) and after that day's marks change (grep, xmltodict, Cargo, FFTW and
libseccomp, all three modes) on a host whose CPU multiplies with AVX2 alone, about twice as slow;
the ten documents whose answers session 56's reading changes moved (five tuning, five held out) ran
again after them, all three modes, on such a host; after session 57's change (an answer with no word
of a document's passages gives way to their likeliest span) the five whose answers it moved on the
same prompts (`readers.md`), run with its first form, which reads their prompts as it does; after
session 59's reading changes (GNU Info, lead-ins, labels) the twelve tuning documents whose passages
or answers they moved, with `--card` and bottom-up ("–": top-down-auto not run since), and time's and
bc's new manuals and diffutils', bzip2's and ed's documents in all three modes; the two documents held
out in session 60 (Readline's manual, httpcore's README) at that session's code, all three modes.

{chr(10).join(lines)}

Rows: `real-docs.json` (each wrong answer with the knowledge the reader was given).
Reproduce: `python benchmarks/real_docs.py` (tuning documents), `--split held-out` (held out, run once).

## Held out

Each held-out document was written up (its questions, and where it is found on these machines)
and committed before the changes it was first run after; it has been run once after each later set
of changes, and no change was made from its misses. Documents whose misses led to a change count
with the tuning documents from then on: bzip2 (session 59: a man page's running head left out),
at-spi2-core (2026-11-29), PulseAudio, make, unzip and patch (2026-11-29 to 2026-12-02), and before them wget, xmltodict, xz, Ninja, tmux and
charset-normalizer. Two changes were withdrawn after their held-out runs (2026-12-05, docs/decisions.md:
the PIC Reference and vim lost answers to the first; the second, read on the held-out prompts alone,
lost the PIC Reference 14 answers); the rows are of the code without them. Session 56 (2026-12-07)
read the held-out prompts twice (`readers.md`): the first read's PIC Reference traces, the span step
answering with the page's title ("pic-21.html"), led to the copy steps refusing a heading path's
first level, and the rows are of the code with it. Session 57's change was chosen on the tuning
prompts and read on the held-out ones once after (Cargo 9 → 10, distro 11 → 12, in all three modes).

| held out | written up | first run, with `--card` |
|---|---|---|
| annotated-types' README | 2026-11-28 | 9, after that day's outline change |
| the Cargo book's Profiles chapter | 2026-11-28 | 10, the same |
| PyYAML's changelog | 2026-11-28 | 20 in all three modes, after that evening's outline and identifier changes |
| FFTW's NEWS | 2026-11-29 | 14 before stacked title lines nested, 14 after |
| vim's man page | 2026-11-29 | 13 before a term beside its text headed it, 14 after |
| dbus-python's NEWS | 2026-12-02 | 9 in all three modes, on the code as it stood |
| orjson's README | 2026-12-02 | 12 in all three modes, after that session's two reading changes |
| groff's PIC Reference | 2026-12-02 | 16, 16 and 15, the same |
| libseccomp's changelog | 2026-12-07 | 10 in all three modes, on the code as it stood |
| distro's changelog (Markdown, named `changelog`) | 2026-12-07 | 11 in all three modes, the same |
| libffi's manual: a folder of 20 HTML pages as Texinfo writes them | 2026-12-07 | 11 in all three modes on the code as it stood, 12 after HTML navigation was left out and a term came to head its definition |
| diffutils' NEWS, given as it ships (`NEWS.gz`) | 2026-12-07 (session 58) | 11 in all three modes, on the code as it stood |
| bzip2's man page, given as its roff source (`bzip2.1.gz`) | 2026-12-07 (session 58) | 12, 11 and 12, the same |
| ed's GNU Info manual, given as it ships (`ed.info.gz`) | 2026-12-07 (session 59) | 4 in all three modes, after that session's changes |
| GNU Readline's user manual, given as it ships (`rluserman.info.gz`) | 2026-12-08 (session 60) | 10 in all three modes, on the code as it stood |
| httpcore's README and Keep a Changelog changelog (its METADATA) | 2026-12-08 (session 60) | 15 in all three modes, the same |

Four of cargo-profiles' answers are one digit, which any answer holding that digit matches.

## How the defaults were chosen

The tuning documents with `--card`, before and after each change that moved them (the changes and
the other documents they were checked on: docs/decisions.md):

| change | documents | right with `--card` |
|---|---|---|
| the readers: a heading path in front, a section's blocks merged up to 600 characters (before: every file as blank-line paragraphs, the PDF unreadable, the HTML page as markup) | 7 | 49 → 81 of 140 |
| a version number one word in a question and a passage ("v3.1.1" = "3.1.1") | 7 | 83 → 89 |
| of passages under a heading path, the reader given the one sentence closest to the question (`[retrieval] sentences = 1`) | 13 | 159 → 172 of 260 |
| a snake-case identifier indexed whole and as its parts | 13 | 172 → 173 |
| an answer that loops gives way to the knowledge's span | 16 | 218 → 221 of 320 |
| a reply that copies the knowledge out gives way to its span; a term beside its text heads it | 16 | 221 → 207 |
| … to a span of at most eight words | 17 | 220 → 206 of 340 |
| an answer made only of the question's words gives way to a span; demonstrations in a document's shape | 18 | 215 → 233 of 360 |
| an answer taken from a heading drops the label words the question repeats | 18 | 233 → 233 |
| a question's type (a count, a name, a title …) steers prose only, not passages under heading paths | 18 | 233 → 241 |
| in choosing the sentence given, the card's subject words weigh half, as in its index | 18 | 241 → 243 |
| a copied span is whole words, and a word after a mark may start one as written after a space | 18 | 243 → 245 |
| an answer ends where the base LLM finds a whole answer likeliest | 18 | 245 → 241 |
| a plain-text table's header row set left of its cells heads it; man pages rendered through tbl (xz's tables) | 18 | 241 → 241 |
| an answer narrows to its run of words likeliest as a whole answer (it may start late, as well as end early) | 18 | 241 → 241 |
| a document's answer narrows once more, as the short answer to a long one (read on the same prompts, `readers.md`; the rows above are from before it) | 18 | 241 → 238 |
| HTML: a block mostly of links' words left out (contents lists, "Next: …, Up: …" lines); a definition list's term heads its definition (ninja-manual, rustdoc-cli and charset-normalizer, the three tuning documents that read differently) | 3 | 36 → 37 |
| a sentence ends only where white space follows its full stop ("orjson.JSONDecodeError" stays whole; the eleven tuning documents that read differently) | 11 | 150 → 151 |
| a span of the question's words in any letter case or with a mark beside it is no answer ("REGULAR EXPRESSIONS ›"; the two tuning documents whose answers it moved on the same prompts, `readers.md`) | 2 | 24 → 26 |
| a reply holding more than eight words in a row of the knowledge is a copy; a short answer may stand in a heading; the copy steps refuse a heading path's first level (the five tuning documents whose answers holding the gold they moved on the same prompts, `readers.md`) | 5 | 65 → 67 |
| an answer with no word of a document's passages gives way to their likeliest span (the three tuning documents whose answers holding the gold it moved on the same prompts) | 3 | 34 → 36 |
| GNU Info: a menu drops only its entries, the text after it stays; a paragraph's first line indented deeper reads at the rest's indent; a heading line that ends a paragraph heads with the paragraph's last sentence ("'-q' '--quiet'", a whole lead-in); a man page's running head left out; a numbered title's number is a label, never an answer (time's and bc's Info manuals, new, and the twelve tuning documents whose passages moved or whose answers moved on the same prompts, `card` and bottom-up) | 14 | 160 → 171 |

The columns count an answer right when it holds a gold answer. The reading changes from the loop
guard on trade such answers for exact ones: a copied-out sentence that held the answer became a
span, most often the right one, and the heading-label change only shortens answers ("Version 4.3" →
"4.3"), so it shows in the exact answers of the same prompts (`readers.md`): real documents, tuning,
EM 43.3 → 47.2 %, contains 64.7 → 64.7 %. The reading rows since were measured on those prompts too
(EM 47.2 → 50.3 → 51.1 → 52.8 → 53.9 %, the last the narrowing); after the last two, this benchmark
ran the tuning documents again (the rows above: 241 with `--card`, 240 bottom-up, both times). The
held-out rows were run once after the subject-word and question-type rows (101 → 99 of 160 with
`--card`), once after the whole-word spans (99 → 98), once after the answer's early end (98 → 98),
once after the table change and the narrowing (98 → 96: two answers that held the gold beyond
the run chosen, for three more exact ones; docs/decisions.md), and once after the short-answer
narrowing (96 → 94 with `--card` and bottom-up, 95 → 93 top-down-auto: annotated-types' "Len(0, 10)"
narrowed to "10", and a PyYAML date read from a heading beside a URL, for four more exact answers, net),
and once after the sentence change, the seven held-out documents whose passages it changed (83 → 85
with `--card` and bottom-up, 82 → 84 top-down-auto: PyYAML 14 → 16, the other six as before), and
once after the marks change, the three held-out documents whose answers it moved on the same prompts
(Cargo 9 → 10, FFTW 14 → 15, libseccomp 10 → 11, in all three modes).
Every tuning row above was run again on 2026-12-07, after the HTML change: 239 with `--card` and 238
bottom-up, the Ninja manual's one more answer on the 238 and 237 that the readers' replay had
implied for the code before it; make-news again after the sentence change (15 → 16), the other ten
tuning documents it changed answering with `--card` as their rows say.

## LM cards

`python benchmarks/real_docs.py --doc DOCUMENT --kind lm` (`--split held-out` for a held-out one)
trains the card a user gets from `kcard train FILE` at its defaults and asks it as above. Since
2026-12-06 every run of a section the card learns keeps its heading path, and what the card writes
under one of its text's heading paths is read as that passage (docs/decisions.md). MPFR's NEWS
(tuning) went from 4 to 6 of 20 with the first change and to 9 with the second, in all three modes;
PyYAML's changelog (held out, run once, after both) answers 7 of 20 in all three modes, against its
retrieval card's 14. Training took 72 and 38 minutes (2.7 and 3.2 minutes a KB), peaking at 4.0 and
3.9 GB. None of MPFR's eleven misses, and 3 of PyYAML's thirteen, had the gold in the knowledge the
reader was given: the card wrote another section's passage, most often another release's, whose
version numbers differ by a digit or two.

## What limits it

On the eighteen tuning documents 62 of the 114 misses with `--card` had a gold answer in the
knowledge the reader was given (the column above), and 66 of the 101 on the first eleven held out: the base
LLM (Gemma 3 270M) and the answer step then answer a release question with the heading's date, name
the heading the question already named ("Version 4.3" for "In GNU make 4.3, which new option …?"),
a heading path ("orjson › Usage › Serialize" for `OPT_NAIVE_UTC`), or the wrong part of the
sentence. Of such misses on the tuning documents before session 57's change (65), 34 answers stood in
the knowledge's heading path, 25 elsewhere in it and 6 in none of it; the change turned answers
with no word of it into spans of it. The two documents held out last show it most: 16 of
their 18 misses had the gold in the knowledge, and the reader named a heading ("Releases",
"BACKWARD COMPATIBILITY" for "ImportError"), a release's date ("2021.7.30" for
"/usr/lib/os-release") or the project's address. The three GNU Info manuals show it most of all (33 of
their 43 misses had the gold in the knowledge): their passages sit three or four numbered levels
deep ("1 Measuring Program Resource Use › 1.3 Redirecting Output › '-o FILE' '--output=FILE': Write
…"), the base LLM copies that line from its start, and the answer becomes a level above the
passage's own ("3 Invoking ed", "Commands", "Math Library Functions") where the question asks for
the option, function or command that heads it; since session 59 a numbered title's number ("1")
never is the answer: with that session's reading changes it took time's manual from 0 to 4 of 20 and
bc's from 3 to 9. Readline's manual, held out in session 60, shows it again: 5 of its 10 misses
answered with its chapter's title, "1 Command Line Editing". Session 60's five probes (docs/decisions.md)
moved where the base LLM copies from, a passage's own heading first or two demonstrations of a
numbered manual, and each traded answers to "which option" for answers to "which release".
The other 52, and 35 held out, are the sentence's or the passage's. On the tuning documents the
whole document holds a gold answer for 358 of the 360 questions, the passages the card finds for
341 and the one sentence the reader is given for 308 (2026-12-07): BM25 over sentences prefers a
short sentence that shares one word with the question to a long one that answers it, and the
sentence that answers is often the one after the closest ("Available since Ninja 1.5." before "There exists a pre-defined pool named console"). Ranking the sentences by
passage and sentence scores together, or within the best passage only, held the gold no more often
(at most 214, and 210, of 260, against 214 for the closest sentence, before the identifier change);
giving the reader two sentences held it for 240 but was answered worse (docs/decisions.md). Cargo's
settings blocks (`opt-level = 0`, `codegen-units = 16`) are one long "sentence" each, and the
reader got the profile's one-line description instead. Retrieval alone finds a passage holding the
answer for 190 of the first ten documents' 200 questions. A 0.5B instruct model given chat
messages (Qwen2.5-Coder-0.5B-Instruct, not a default; measured on 2026-11-26, whole passages)
answered with the span itself: EM 47.1 / 51.7 against Gemma's 5.7 / 6.7 with `rules`, for about the
same share of answers holding the gold. Read through today's `rules` reader and completion prompt on
the eighteen tuning documents' prepared prompts (2026-12-07, session 58), that model held the gold
for 268 of 360 (EM 235) against Gemma's 246 (221), 18 of 20 on four documents (MPFR, D-Bus, wget,
PulseAudio); on the first eleven held out, read once, 146 of 220 (EM 127) against 119 (105), at most
17 on any of them: twice the parameters, six to twelve points more, and a base LLM of that size
would not meet the goal either.
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--doc", action="append", choices=sorted(SOURCES))
    parser.add_argument("--split", choices=["tuning", "held-out"], default="tuning")
    parser.add_argument("--mode", action="append", choices=[*MODES, "vanilla"],
                        help="card, bottom_up, top_down_auto, vanilla (default: all)")
    parser.add_argument("--kind", action="append", choices=["retrieval", "lm", "vanilla"],
                        help="which cards (default: retrieval and vanilla; lm trains one with kcard train)")
    parser.add_argument("--format", default="auto", help="force a reader (default: auto)")
    parser.add_argument("--passage-chars", type=int, help="passages of at most this many characters (a probe)")
    parser.add_argument("--dry", action="store_true", help="print rows, do not record them")
    parser.add_argument("--save", type=Path, help="also append each whole row, misses with it, to this JSONL file")
    parser.add_argument("--report", action="store_true", help="only write the report of the recorded rows")
    parser.add_argument("--keep", type=Path, help="keep each trained LM card in this folder (DIR/DOCUMENT)")
    parser.add_argument("--trained", type=Path, help="ask the LM cards kept in this folder by --keep, not training")
    args = parser.parse_args()
    if args.passage_chars is not None:
        documents.PASSAGE_CHARS = args.passage_chars
    modes = args.mode or [*MODES, "vanilla"]
    path = HERE / "results" / "real-docs.json"
    rows = json.loads(path.read_text())["rows"] if path.exists() else []
    names = [] if args.report else args.doc or [name for name, source in SOURCES.items() if source[2] == args.split]
    for document in names:
        with tempfile.TemporaryDirectory() as work:
            file = extract(document, Path(work) / "docs")
            kinds = args.kind or ["retrieval"] * bool(set(modes) & set(MODES)) + ["vanilla"] * ("vanilla" in modes)
            for kind in kinds:
                card, stats = (build(document, file, Path(work), args.format) if kind == "retrieval" else
                               train(document, file, Path(work), args.trained and args.trained / document)
                               if kind == "lm" else (None, {}))
                if kind == "lm" and args.keep and not args.trained:
                    shutil.copytree(Path(work) / "trained", args.keep / document, dirs_exist_ok=True)
                row = {"document": document, "split": SOURCES[document][2], "kind": kind, "questions": 20,
                       "format": args.format if args.format != "auto" else
                       "+".join(sorted({documents.format_of(part) for part in files(file)})),
                       "train_seconds": None, **stats, **ask(document, card, [m for m in modes if m in MODES])}
                print(json.dumps({k: v for k, v in row.items() if not k.startswith("missed")}), flush=True)
                if args.save:
                    with args.save.open("a") as saved:
                        saved.write(json.dumps(row) + "\n")
                if not args.dry:
                    rows = [r for r in rows if (r["document"], r["kind"]) != (document, kind)] + [row]
    rows.sort(key=lambda r: (list(SOURCES).index(r["document"]), r["kind"]))
    if not args.dry:
        write_result("real-docs", {"rows": rows}, report(rows))


if __name__ == "__main__":
    main()
