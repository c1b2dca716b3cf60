"""The prompts of the Knowledge Card paper (Feng et al., ICLR 2024), and default in-context examples.

Every segment sits on its own line so that the base LLM's reply to each one ends at a newline.
"""

from __future__ import annotations

from kcard_core.config import limit
from kcard_core.text import one_line

NEED_MORE = "Do you need more information? (Yes or No)"
# the paper's template-sensitivity study (App. D): the three agree on 79.9 % of questions
NEED_MORE_TEMPLATES = (NEED_MORE, "Is more information needed here? (Yes or No)",
                       "Would you like additional information? (Yes or No)")
WHAT_KIND = "What kind of information do you need?"
# the paper's sentence, then a cue: after a bare "." small LLMs start a new line, which ends the reply
CHOOSE_SOURCE = "Choose an information source from the following: {sources}.\nSource:"
GENREAD = "Generate a background document from Wikipedia to answer the given question. {question}"


# Bottom-up demonstrations: question, knowledge, the question again, short answer. The first three
# show knowledge as a document card gives it (passages after their heading path, "A › B: text", several
# in one line) and an answer that is a span inside it: a version from a heading, a value, a phrase.
# The contests put the winner first in two phrasings and last in a third, so that the role, not the
# position, gives the answer; the question comes before the knowledge as well as after it; the last
# demo's answer is in its knowledge's second sentence. Chosen on MidtermQA's tuning split and the
# real documents' tuning split (results/reader.md, results/readers.md, docs/decisions.md).
BOTTOM_UP_EXAMPLES = [
    {"knowledge": "Release history › 3.2.0 (2021-05-14): The --color option accepts \"auto\". Support for Solaris "
                  "was removed. Release history › 3.1.0 (2020-12-02): A new --json flag writes the report as JSON.",
     "question": "In which release was support for Solaris removed?", "answer": "3.2.0"},
    {"knowledge": "Usage › Options: -q, --quiet: print nothing but errors. -t SECONDS, --timeout SECONDS: give up "
                  "after SECONDS; the default is 30.",
     "question": "What is the default timeout?", "answer": "30"},
    {"knowledge": "Installation › Requirements: Python 3.9 or newer and the zlib library. Installation › From "
                  "source: run make install as root.",
     "question": "Which library does the installation require besides Python?", "answer": "the zlib library"},
    {"knowledge": "Canberra was chosen as the capital of Australia in 1908 as a compromise between Sydney "
                  "and Melbourne.",
     "question": "What is the capital of Australia?", "answer": "Canberra"},
    {"knowledge": "The Great Fire of London broke out on 2 September 1666 in a bakery on Pudding Lane.",
     "question": "In which year did the Great Fire of London happen?", "answer": "1666"},
    {"knowledge": "Marie Curie won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911.",
     "question": "Which two Nobel Prizes did Marie Curie win?", "answer": "Physics and Chemistry"},
    {"knowledge": "The 1992 U.S. presidential election was won by Bill Clinton, who defeated George H. W. Bush.",
     "question": "Who won the 1992 U.S. presidential election?", "answer": "Bill Clinton"},
    {"knowledge": "1960 U.S. presidential election: John F. Kennedy won and Richard Nixon lost.",
     "question": "Who won the 1960 U.S. presidential election?", "answer": "John F. Kennedy"},
    {"knowledge": "Stephen A. Douglas lost the 1860 U.S. presidential election to Abraham Lincoln.",
     "question": "Who won the 1860 U.S. presidential election?", "answer": "Abraham Lincoln"},
    {"knowledge": "The Eiffel Tower stands on the Champ de Mars in Paris. It was completed in 1889 for the "
                  "World's Fair.",
     "question": "In which year was the Eiffel Tower completed?", "answer": "1889"},
]

# Where the knowledge is a document's passages under their heading paths, two more after the first:
# an item's own term under its section's heading (not the section) is the answer, and where the
# question names the heading, the answer is in the text under it. Only then, so that prose is read as
# before (chosen on the real documents' tuning prompts: docs/decisions.md, 2026-12-02 session 33).
DOCUMENT_EXAMPLES = [
    {"knowledge": "OPTIONS › Output control › -v, --verbose: Print the name of each file as it is read.",
     "question": "Which option prints the name of each file as it is read?", "answer": "--verbose"},
    {"knowledge": "Release history › 2.4.0 (2019-03-02): Added the --dry-run flag. Fixed a crash on empty input.",
     "question": "Which flag was added in release 2.4.0?", "answer": "--dry-run"},
]

# Top-down calibration: one question the model can answer alone ("No"), one it cannot ("Yes").
TOP_DOWN_EXAMPLES = [
    {"question": "What color is the sky on a clear day?", "need": None, "answer": "Blue"},
    {"question": "Who won the 2022 election for governor of Nevada?",
     "need": "The results of the 2022 Nevada governor election.",
     "sources": "encyclopedia, news, science", "source": "news",
     "knowledge": "Joe Lombardo defeated the incumbent Steve Sisolak in the 2022 Nevada gubernatorial election.",
     "answer": "Joe Lombardo"},
]


def bottom_up_prompt(question: str, knowledge: list[str], examples: list[dict] = BOTTOM_UP_EXAMPLES) -> str:
    def block(question: str, knowledge: str) -> str:
        return f"Question: {question}\nKnowledge: {knowledge}\nQuestion: {question}\nAnswer:"

    text = one_line(" ".join(knowledge))[: limit("KCARD_MAX_KNOWLEDGE_CHARS")]
    demos = [f"{block(ex['question'], one_line(ex['knowledge']))} {ex['answer']}" for ex in examples]
    # no knowledge: the question alone (after an empty "Knowledge:" line the reader answered nothing)
    last = block(one_line(question), text) if text else f"Question: {one_line(question)}\nAnswer:"
    return "\n\n".join([*demos, last])


def reading_examples(examples: list[dict], headed: bool) -> list[dict]:
    """The demonstrations a bottom-up prompt reads with: ``examples``; where they are the defaults and
    the knowledge is passages under heading paths (``headed``), with :data:`DOCUMENT_EXAMPLES` too."""
    if examples is BOTTOM_UP_EXAMPLES and headed:
        return [examples[0], *DOCUMENT_EXAMPLES, *examples[1:]]
    return examples


def narrowing_prompt(question: str, answer: str) -> str:
    """What the base LLM reads to narrow ``answer``, an answer to ``question`` that may say more than
    it asks, to the part that answers: each default demonstration's knowledge as a long answer followed
    by its own answer as the short one; then each of those answers of more than one word as its own
    long answer, kept whole ("Bill Clinton" stays "Bill Clinton"); then ``answer`` as the long answer
    and "Short answer:"."""
    def block(question: str, long: str) -> str:
        return f"Question: {one_line(question)}\nLong answer: {one_line(long)}\nShort answer:"

    examples = reading_examples(BOTTOM_UP_EXAMPLES, headed=True)
    demos = [*((ex["question"], ex["knowledge"], ex["answer"]) for ex in examples),
             *((ex["question"], ex["answer"], ex["answer"]) for ex in examples if len(ex["answer"].split()) > 1)]
    return "\n\n".join([*(f"{block(q, long)} {short}" for q, long, short in demos), block(question, answer)])


def top_down_example(example: dict, explicit: bool) -> str:
    lines = [f"Question: {example['question']}"]
    if example.get("need"):
        lines.append(f"{NEED_MORE} Yes")
        if explicit:
            lines.append(f"{CHOOSE_SOURCE.format(sources=example['sources'])} {example['source']}")
        else:
            lines.append(f"{WHAT_KIND} {example['need']}")
        lines.append(f"Knowledge: {one_line(example['knowledge'])}")
    else:
        lines.append(f"{NEED_MORE} No")
    lines.append(f"Answer: {example['answer']}")
    return "\n".join(lines)


def top_down_start(question: str, examples: list[dict], explicit: bool) -> str:
    demos = [top_down_example(example, explicit) for example in examples]
    return "\n\n".join([*demos, f"Question: {one_line(question)}"]) + "\n"
