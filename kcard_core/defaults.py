"""The settings a chain gets when nobody names them, in one place: ``build_chain``, ``kcard ask`` and
``kcard eval`` all read them, so what the README quotes is what a user gets with no flags.

Each was chosen by measurement on MidtermQA's tuning split (questions 1-100) and is reported on
the held-out questions (101-505): benchmarks/results/knowledge-lift-heldout.md.
"""

MODES = ("bottom-up", "top-down-auto", "top-down-exp", "combined")  # how knowledge reaches the base LLM
BASELINES = ("vanilla", "genread")  # the base LLM alone; the base LLM writing its own knowledge

# Documents each LM card samples: None = the card's own ``[generation] n`` (1 unless its manifest says so,
# as for every first-party card, with which MidtermQA and PopQA were measured; a card `kcard train` memorised
# samples several: kcard_train.memorise.SAMPLES). Retrieval and KG cards return one document of their best passages.
N1 = None
N2 = 5  # documents the relevance selector keeps
N3 = 1  # documents the factuality selector keeps (the paper: 3; this reader does best with one)
JUDGE = "agreement"  # factuality: what a document adds beyond the question, checked against evidence
JUDGES = ("agreement", "embedding", "llm", "both")
# Pruning is off: with one kept document of one or two sentences it changed no answer on the tuning
# split (89 EM with or without it); --selectors relevance,pruning,factuality
# brings it back (the paper's pipeline).
SELECTORS = ("relevance", "factuality")
# The answer step adds this to the base LLM's logits for the knowledge's words that the question lacks:
# Gemma 3 270M handed the right paragraph answered 16 of 20 kelderwick questions plainly ("100
# minutes" for a crossing that "takes ninety minutes"), 18 with it; MidtermQA's tuning split 93 -> 96
# EM (benchmarks/results/own-card.md, knowledge-lift-heldout.md; with the answer prompt's earlier
# demonstrations: 13 -> 16 and 93 -> 94).
COPY_BIAS = 2.0
READER = "rules"  # the answer step (kcard-selectors' reader; "plain" where it is not installed)
# Asking again for an answer of the type the question asks for (kcard_core.answer_types): the bias
# on the spans of that type. The reader handed the right paragraph of the five own-card texts
# (kelderwick … brackenmoor) and the knowledge of the cards' misses there: 91 of 125 right without
# asking again; asking again at 2 / 4 / 6 / 8: 96 / 103 / 104 / 104 (at 8 a name ran on and on).
TYPE_BIAS = 6.0
