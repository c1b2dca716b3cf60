"""The settings a chain gets when nobody names them, in one place: ``build_chain``, ``kcard ask`` and
``kcard eval`` all read them, so what the README quotes is what a user gets with no flags.

Each was chosen by measurement on MidtermQA's tuning split (questions 1-100) and the own-card texts,
and is reported on held-out data: benchmarks/results/knowledge-lift-heldout.md, own-card.md, and
docs/decisions.md for how.
"""

MODES = ("bottom-up", "top-down-auto", "top-down-exp", "combined")  # how knowledge reaches the base LLM
BASELINES = ("vanilla", "genread")  # the base LLM alone; the base LLM writing its own knowledge

N1 = None  # documents each LM card samples; None: the card's own [generation] n (retrieval and KG cards: one)
N2 = 5  # documents the relevance selector keeps
N3 = 1  # documents the factuality selector keeps (the paper: 3)
JUDGE = "agreement"  # factuality: what a document adds beyond the question, checked against evidence
JUDGES = ("agreement", "embedding", "llm", "both")
SELECTORS = ("relevance", "factuality")  # pruning is off by default; --selectors relevance,pruning,factuality
READER = "rules"  # the answer step: kcard-selectors' reader ("plain" where it is not installed)
COPY_BIAS = 2.0  # added to the base LLM's logits for the knowledge's words that the question lacks
TYPE_BIAS = 6.0  # the rules reader: the bias on the knowledge's spans of the type a question asks for
