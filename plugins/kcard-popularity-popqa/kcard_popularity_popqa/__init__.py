"""kcard plugin: a popularity table for `kcard ask --gate`, from PopQA (Mallen et al., 2023).

The table is read on first use from popqa/dev.jsonl in kcard's data folder ($KCARD_DATA, else the
user data folder: kcard_core.config.data_dir); registering it costs nothing.
"""

from functools import lru_cache

from kcard_core.errors import KcardError
from kcard_core.config import data_dir
from kcard_core.hookspecs import hookimpl
from kcard_core.popularity import Popularity, PopularityTable


@lru_cache(maxsize=1)
def table() -> PopularityTable:
    path = data_dir() / "popqa" / "dev.jsonl"
    if not path.is_file():
        raise KcardError(f"PopQA is not at {path}: set KCARD_DATA to the folder that holds popqa/, or put "
                         f"popqa/ in {path.parents[1]}")
    return PopularityTable.from_popqa(path)


def lookup(question: str) -> Popularity | None:
    return table()(question)


@hookimpl
def register_popularity(register):
    register("popqa", lookup)
