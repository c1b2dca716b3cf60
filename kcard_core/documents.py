"""Document readers: a user's files as passages that keep their place in the document.

A reader turns one file into :class:`Block` s (a paragraph, a list item, a table row with its
header, a code block), each under its heading path (document title › section › subsection).
:func:`chunk` makes passages of them: the blocks of one section merged up to a size limit, none cut
unless it alone is over it. A passage is indexed and read with its heading path in front
(:meth:`Passage.contextual`), so "Support for X has been removed." still says which release.

Formats (``--format``): ``markdown`` (markdown-it-py), ``rst`` (docutils), ``html``
(BeautifulSoup), ``pdf`` (pdfminer.six), ``man`` (a man page's roff source, rendered by groff),
``info`` (a GNU Info manual, its navigation left out), ``text`` (plain text with outline headings: ``*``/``**`` lines, underlined headings, numbered
sections, lead-in lines ending in ":" and indentation, as in NEWS files, changelogs and man pages
rendered to text), ``paragraphs`` (blank-line separated), ``lines`` (one passage a line) and
``jsonl`` ({"text": ...} a line, as a card package stores its passages). ``auto`` picks by
extension, then by content. A file compressed with gzip, bzip2 or xz (``NEWS.gz``, ``grep.1.gz``,
as Debian ships its documentation) is read as the file inside. The parsers are imported only when a
file of theirs is read.
"""

from __future__ import annotations

import importlib
import itertools
import io
import json
import logging
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from kcard_core.errors import KcardError
from kcard_core.text import SEPARATOR, WORD, one_line, sentences

logger = logging.getLogger(__name__)

FORMATS = ("auto", "markdown", "rst", "html", "pdf", "man", "info", "text", "paragraphs", "lines", "jsonl")
EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".rest": "rst", ".html": "html",
              ".htm": "html", ".xhtml": "html", ".pdf": "pdf", ".info": "info", ".jsonl": "jsonl"}
ATX_HEADING = re.compile(r"#{1,6} \S")  # a Markdown heading line ("## 2.4.0 (2021-10-14)")
SNIFF_LINES = 100  # the first lines of a file without an extension in which its kind is looked for
TEXT_EXTENSIONS = ("", ".txt", ".text")  # NEWS, ChangeLog, README, notes.txt: plain text in a folder
MAN_SECTION = re.compile(r"\.[1-9][a-z]*")  # a man page's file name ends in its section: grep.1, open.3p
ROFF_TITLE = re.compile(r"\.(?:TH|Dd)\s")  # the line that opens a man page's roff source (man, mdoc macros)
MAN_LINK = re.compile(r"\.so[ \t]+(\S+)")  # a man page that is another's: init.1 holds ".so man1/systemd.1"
MAN_LINKS = 5  # the most links followed from one page to the page it stands for
COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}  # suffix -> the standard library's module
PASSAGE_CHARS = 600  # a section's blocks are merged into passages of at most this many characters
MARKS = "-*+•·o–\u2023\u2043\u25a0-\u25ff"  # a list item's bullet (a regex class): ‣ ⁃ and ○ ▪ ► ◦ …


@dataclass(frozen=True)
class Passage:
    """What a card retrieves and an LM card learns: a piece of one document, where it stands in it."""
    text: str  # on one line
    source: str = ""  # the file it came from (its name, or its path within a folder given as the corpus)
    headings: tuple[str, ...] = ()  # document title › section › subsection

    def contextual(self) -> str:
        """The passage with its heading path in front: what retrieval indexes and the reader reads."""
        if not self.headings:
            return self.text
        return f"{SEPARATOR.join(self.headings).rstrip(':')}: {self.text}"

    def to_json(self) -> str:
        record = {"text": self.text, **({"source": self.source} if self.source else {}),
                  **({"headings": list(self.headings)} if self.headings else {})}
        return json.dumps(record, ensure_ascii=False)


@dataclass
class Block:
    """One unit of a document that is never cut in two unless it alone is over the size limit."""
    text: str
    headings: tuple[str, ...] = ()
    kind: str = "text"  # "text", "item", "row", "code"


@dataclass
class Outline:
    """The heading path as a reader walks a document: ``enter`` a heading of a level, read ``path``."""
    stack: list[tuple[float, str]] = field(default_factory=list)

    def enter(self, level: float, title: str) -> None:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        title = one_line(title)
        if title:
            self.stack.append((level, title))

    def beneath(self) -> float:
        """The level just beneath the deepest heading entered: a definition list's term's, which heads
        its definition."""
        return (self.stack[-1][0] if self.stack else 0) + 0.5

    def leave(self, level: float) -> None:
        """Close every heading at ``level`` or deeper."""
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.stack)


# -- the whole corpus ----------------------------------------------------------------------------

def read_passages(paths: str | Path | Iterable[str | Path], format: str = "auto",
                  size: int | None = None) -> list[Passage]:
    """The passages of every file given, in order; each records its source. A folder stands for its
    documents, recursively (:func:`document_name`, also compressed: :data:`COMPRESSED`), hidden ones
    left out; one of them that cannot be read is skipped with a warning. Raises :class:`KcardError`
    naming the file for a file given by name that cannot be read or parsed, and when there is no
    text at all."""
    if format not in FORMATS:
        raise KcardError(f"corpus format {format!r}: use one of {', '.join(FORMATS)}")
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(path) for path in paths]
    size = PASSAGE_CHARS if size is None else size
    passages: list[Passage] = []
    skipped: list[str] = []
    for path in paths:
        if not path.is_dir():
            passages += read_file(path, format, path.name, size)
            continue
        for file in sorted(path.rglob("*")):
            source = str(file.relative_to(path))
            if (not file.is_file() or any(part.startswith(".") for part in file.relative_to(path).parts)
                    or not document_name(inner_name(file))):
                continue
            try:
                passages += read_file(file, format, source, size)
            except KcardError as error:
                skipped.append(f"{file.name} ({str(error).removeprefix(f'{file}, ')})")
    if skipped:
        logger.warning("%d file%s left out: %s", len(skipped), "s" * (len(skipped) > 1), "; ".join(skipped[:3])
                       + ("; …" if len(skipped) > 3 else ""))
    if not passages:
        raise KcardError(f"the corpus {', '.join(map(str, paths))} holds no text")
    return passages


def read_corpus(paths: str | Path | Iterable[str | Path], format: str = "auto") -> list[str]:
    """Every passage of :func:`read_passages`, as text with its heading path in front."""
    return [passage.contextual() for passage in read_passages(paths, format)]


def passages_jsonl(passages: list[Passage]) -> str:
    """Passages as JSONL ({"text", "source", "headings"} a line), the ``jsonl`` format reads back."""
    return "".join(passage.to_json() + "\n" for passage in passages)


class PassageFile(Sequence[Passage]):
    """The passages of a file :func:`passages_jsonl` wrote, each parsed when asked for: a card of a
    million passages opens in a moment and holds in memory only those a question finds.

    Takes the file's path; guarantees ``len()`` is its number of lines and item ``i`` its line ``i``.
    """

    def __init__(self, path: str | Path):
        import mmap

        import numpy as np

        self.path = Path(path)
        with open(self.path, "rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if self.path.stat().st_size else b""
        ends = np.flatnonzero(np.frombuffer(self.data, dtype=np.uint8) == ord("\n")) if self.data else np.zeros(0)
        if len(self.data) and self.data[-1:] != b"\n":
            ends = np.append(ends, len(self.data))
        self.ends = ends.astype(np.int64)

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, index: int) -> Passage:  # type: ignore[override]
        index = range(len(self))[index]  # a negative index counts from the end; one past it raises IndexError
        start = int(self.ends[index - 1]) + 1 if index else 0
        line = self.data[start: int(self.ends[index])].decode("utf-8")
        return jsonl_passages(line, self.path, "")[0]


def closest_sentences(query: str, passages: Sequence[Passage], n: int,
                      subject: frozenset[str] | set[str] = frozenset()) -> list[Passage]:
    """What a reader is given of ``passages`` for ``query``: the ``n`` sentences of the passages that
    carry a heading path closest to it, best first (:func:`kcard_core.retrieval.closest` over the
    sentences of all of them, each read with its heading path in front, the card's ``subject`` terms
    weighing less; a passage without a heading path counts as one sentence), each a passage of its
    own under its passage's source and headings. Passages none of which carries a heading path, or
    ``n`` = 0, come back whole: a sentence of plain prose may need the ones before it ("It was begun
    in 1284"), a sentence under its heading path has its context with it."""
    if n == 0 or not any(passage.headings for passage in passages):
        return list(passages)
    from kcard_core.retrieval import closest

    pieces = [replace(passage, text=part) for passage in passages
              for part in (sentences(passage.text) if passage.headings else [passage.text])]
    return [pieces[position] for position in closest(query, [piece.contextual() for piece in pieces], n, subject)]


class ContextualTexts(Sequence[str]):
    """``passages`` as :meth:`Passage.contextual` texts, each made when asked for."""

    def __init__(self, passages: Sequence[Passage]):
        self.passages = passages

    def __len__(self) -> int:
        return len(self.passages)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self.passages[index].contextual()


def inner_name(path: Path) -> Path:
    """The name of the file inside ``path``: ``NEWS`` of ``NEWS.gz`` (:data:`COMPRESSED`), else ``path``."""
    return path.with_suffix("") if path.suffix.lower() in COMPRESSED else path


def document_name(path: Path) -> bool:
    """Whether a file named ``path`` is a document a folder stands for: a known extension, plain text
    (:data:`TEXT_EXTENSIONS`) or a man page (:data:`MAN_SECTION`)."""
    suffix = path.suffix.lower()
    return suffix in EXTENSIONS or suffix in TEXT_EXTENSIONS or bool(MAN_SECTION.fullmatch(suffix))


def file_bytes(path: Path) -> bytes:
    """The bytes of ``path``, or of the file inside it where it is compressed (:data:`COMPRESSED`).
    Raises :class:`KcardError` for a compressed file that does not decompress."""
    data = path.read_bytes()
    module = COMPRESSED.get(path.suffix.lower())
    if module is None:
        return data
    try:
        return importlib.import_module(module).decompress(data)
    except Exception as error:  # gzip.BadGzipFile, lzma.LZMAError, OSError, EOFError: a broken archive
        raise KcardError(f"cannot decompress {path} ({module}): {error}") from None


def format_of(path: Path) -> str:
    """The format ``auto`` reads file ``path`` as (:func:`detect`, on the file inside where it is compressed)."""
    return detect(inner_name(path), file_bytes(path))


def read_file(path: Path, format: str, source: str, size: int) -> list[Passage]:
    """The passages of one file (see :func:`read_passages`); the file is read once, decompressed
    where it is compressed (:data:`COMPRESSED`)."""
    try:
        data = file_bytes(path)
        if format == "auto":
            format = detect(inner_name(path), data)
        if format == "pdf":
            blocks = outline_blocks(pdf_text(data, path))
        elif format == "man":
            blocks = outline_blocks(man_text(*linked_page(data, path)))
        elif format == "info":
            blocks = outline_blocks(info_text(data, path))
        else:
            content = decoded(data)
            if format == "jsonl":
                return jsonl_passages(content, path, source)
            blocks = READERS[format](content)
    except KcardError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        raise KcardError(f"cannot read the corpus {path}: {error}") from None
    except Exception as error:  # a parser's own failure on a malformed file, named for the user
        raise KcardError(f"cannot read {path} as {format}: {type(error).__name__}: {error}") from None
    return [Passage(text, source, headings) for headings, text in chunk(blocks, size)]


def detect(path: Path, data: bytes) -> str:
    """The format of file ``path`` holding ``data``: by its extension, else by its first bytes (HTML,
    PDF), else ``man`` when one of its first lines opens a man page (:data:`ROFF_TITLE`) or it is a
    link to one (:func:`linked_name`), else
    ``markdown`` when two of its first lines, neither right under the other, are Markdown headings
    (a CHANGELOG.md that a package ships as "changelog"; not a comment block), else ``text`` when it
    has a blank line and ``lines`` when not (a file of one fact per line is that many passages).
    Raises UnicodeDecodeError for a binary file (:func:`decoded`)."""
    if path.suffix.lower() in EXTENSIONS:
        return EXTENSIONS[path.suffix.lower()]
    if data.startswith(b"%PDF"):
        return "pdf"
    if re.match(rb"\s*(<!doctype html|<html)", data[:4096], re.I):
        return "html"
    text = decoded(data).strip()
    lines = text.splitlines()
    if any(ROFF_TITLE.match(line) for line in lines[:SNIFF_LINES]) or linked_name(text):
        return "man"
    headings = [bool(ATX_HEADING.match(line)) for line in lines[:SNIFF_LINES]]
    if sum(heading and not before for before, heading in zip([False, *headings], headings)) >= 2:
        return "markdown"
    return "text" if any(not line.strip() for line in lines) else "lines"


def decoded(data: bytes) -> str:
    """A text file's text: UTF-8 (a byte-order mark dropped), else Windows-1252, the encoding of most
    older text files (GNU make's NEWS, many changelogs: ISO-8859-1 with its printable extras), with
    the bytes it leaves undefined read as ISO-8859-1. Raises UnicodeDecodeError for a file with NUL
    bytes in its first 4 KB: a binary file, not text."""
    if b"\0" in data[:4096]:
        at = data.index(b"\0")
        raise UnicodeDecodeError("utf-8", data, at, at + 1, "a NUL byte: not a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def jsonl_passages(content: str, path: Path, source: str) -> list[Passage]:
    passages = []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = one_line(record["text"])
            headings = tuple(one_line(h) for h in record.get("headings", ()))
            if not isinstance(record.get("source", ""), str):
                raise TypeError
        except (ValueError, KeyError, TypeError, AttributeError):
            raise KcardError(f'{path}, line {number}: expected a JSON object with a "text" field') from None
        if text:
            passages.append(Passage(text, record.get("source", source), headings))
    return passages


# -- passages from blocks ------------------------------------------------------------------------

def chunk(blocks: Iterable[Block], size: int = PASSAGE_CHARS) -> list[tuple[tuple[str, ...], str]]:
    """(heading path, text) passages: consecutive blocks under the same heading merged while the
    text stays within ``size`` characters; a block over ``size`` alone is cut at sentence ends (a
    code block at line ends). Blocks under no heading are never merged: a text without structure
    reads as its paragraphs."""
    out: list[tuple[tuple[str, ...], str]] = []
    for block in blocks:
        text = block.text.strip() if block.kind == "code" else one_line(block.text)
        if block.kind == "item":  # a bullet is layout, not content; an item ends where its sentence does
            text = re.sub(rf"^(?:[{MARKS}]|\*+)\s+", "", text)
            text += "." if text and text[-1].isalnum() or text.endswith(")") else ""
        if not text:
            continue
        for piece in cut(text, size, block.kind == "code"):
            piece = one_line(piece)
            if block.headings and out and out[-1][0] == block.headings and len(out[-1][1]) + len(piece) < size:
                out[-1] = (block.headings, f"{out[-1][1]} {piece}")
            else:
                out.append((block.headings, piece))
    return out


def cut(text: str, size: int, code: bool = False) -> list[str]:
    """``text`` in pieces of at most ``size`` characters: whole sentences (lines of code), a sentence
    over ``size`` cut between words."""
    if len(text) <= size:
        return [text]
    units = [part for unit in (text.splitlines() if code else sentences(text))
             for part in (unit.split() if len(unit) > size else [unit])]
    pieces = [""]
    for unit in units:
        if pieces[-1] and len(pieces[-1]) + len(unit) + 1 > size:
            pieces.append("")
        pieces[-1] = f"{pieces[-1]} {unit}".strip()
    return [piece for piece in pieces if piece]


# -- Markdown ------------------------------------------------------------------------------------

INLINE_OWNERS = ("heading_open", "th_open", "td_open")  # their inline text is read with them


def markdown_blocks(content: str) -> list[Block]:
    """Markdown (CommonMark with tables) through markdown-it-py."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(content)
    outline, blocks = Outline(), []
    depth, item, header, row = 0, None, [], []  # depth: list nesting; item: the top-level item's texts
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "heading_open":
            outline.enter(int(token.tag[1]), inline_text(tokens[index + 1]))
        elif kind in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif kind == "list_item_open" and depth == 1:
            item = []
        elif kind == "list_item_close" and depth == 1:
            blocks.append(Block(" ".join(item), outline.path, "item"))
            item = None
        elif kind in ("inline", "fence", "code_block") and tokens[index - 1].type not in INLINE_OWNERS:
            text = inline_text(token) if kind == "inline" else token.content.rstrip()
            if item is not None:  # a list item's paragraphs and code are one block
                item.append(text)
            else:
                blocks.append(Block(text, outline.path, "text" if kind == "inline" else "code"))
        elif kind == "html_block":
            blocks += [Block(block.text, outline.path, block.kind) for block in html_blocks(token.content)]
        elif kind == "tr_open":
            row = []
        elif kind in ("th_open", "td_open"):
            row.append(inline_text(tokens[index + 1]))
        elif kind == "tr_close":
            if tokens[index - 1].type == "th_close" and not header:
                header = row
            else:
                blocks.append(Block(table_row(header, row), outline.path, "row"))
        elif kind == "table_close":
            header = []
    return blocks


def inline_text(token) -> str:
    """The words of an inline token: text, code, link and image text; breaks as spaces; no HTML."""
    parts = []
    for child in token.children or ():
        if child.type in ("text", "code_inline", "image"):  # an image's content is its alt text
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return one_line("".join(parts))


def table_row(header: list[str], cells: list[str]) -> str:
    """A table row with its header: "Column: cell; Other: cell" (the cells alone without one)."""
    if not header or len(header) != len(cells):
        return "; ".join(cell for cell in cells if cell)
    return "; ".join(f"{name}: {cell}" if name else cell for name, cell in zip(header, cells) if cell)


# -- reStructuredText ----------------------------------------------------------------------------

def rst_blocks(content: str) -> list[Block]:
    """reStructuredText through docutils (its directives and roles as docutils knows them; errors
    in the markup do not stop it)."""
    from docutils import nodes
    from docutils.core import publish_doctree

    tree = publish_doctree(content, settings_overrides={"report_level": 5, "halt_level": 5, "file_insertion_enabled":
                                                         False, "raw_enabled": False})
    blocks: list[Block] = []
    outline = Outline()
    if tree.get("title"):
        outline.enter(0, tree["title"])

    def walk(node, level: int) -> None:
        for child in node.children:
            if isinstance(child, (nodes.title, nodes.subtitle)) and isinstance(node, nodes.document):
                continue
            if isinstance(child, nodes.section):
                title = child.next_node(nodes.title)
                outline.enter(level + 1, title.astext() if title else "")
                walk(child, level + 1)
                outline.leave(level + 1)
            elif isinstance(child, nodes.title):
                continue
            elif isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                blocks.extend(Block(item.astext(), outline.path, "item") for item in child.children)
            elif isinstance(child, nodes.definition_list):  # each term heads its definition, as a heading does
                for item in child.children:
                    term, definition = item.next_node(nodes.term), item.next_node(nodes.definition)
                    under = outline.beneath()
                    outline.enter(under, term.astext() if term else "")
                    if definition is not None:
                        walk(definition, level)
                    outline.leave(under)
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                blocks.append(Block(child.astext(), outline.path, "code"))
            elif isinstance(child, nodes.table):
                header = [one_line(entry.astext()) for row in child.findall(nodes.thead) for entry in
                          row.findall(nodes.entry)]
                for body in child.findall(nodes.tbody):
                    for row in body.children:
                        blocks.append(Block(table_row(header, [one_line(entry.astext()) for entry in
                                                               row.findall(nodes.entry)]), outline.path, "row"))
            elif isinstance(child, (nodes.paragraph, nodes.line_block, nodes.field_list, nodes.option_list)):
                blocks.append(Block(child.astext(), outline.path))
            elif isinstance(child, (nodes.comment, nodes.substitution_definition, nodes.target, nodes.system_message,
                                    nodes.raw, nodes.image)):
                continue
            elif isinstance(child, nodes.Element):  # block quotes, admonitions, containers: what they hold
                walk(child, level)

    walk(tree, 0)
    return blocks


# -- HTML ----------------------------------------------------------------------------------------

LEAVE_OUT = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form", "button",
             "iframe", "head")
INLINE = {"a", "span", "b", "i", "em", "strong", "code", "tt", "kbd", "var", "samp", "abbr", "cite", "sub", "sup",
          "small", "mark", "q", "u", "s", "time", "label", "img", "font"}


NAVIGATION = 0.5  # a block more than this share of whose words are links' is navigation: a table of
# contents, "Next: Types, Previous: The Basics, Up: Using libffi [Index]"


def html_blocks(content: str) -> list[Block]:
    """HTML through BeautifulSoup: the page's title, its headings and the blocks under them;
    scripts, styles, navigation, headers, footers and marks that link to their own place ("¶") left
    out, and any block most of whose words are links' (:data:`NAVIGATION`). A definition list's
    terms head their definitions, as a heading does."""
    from bs4 import BeautifulSoup, NavigableString, Tag, Comment

    soup = BeautifulSoup(content, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for element in soup.find_all(LEAVE_OUT):
        element.decompose()
    for element in soup.find_all(attrs={"role": ("navigation", "banner", "contentinfo", "search")}):
        element.decompose()
    for link in soup.find_all("a", href=re.compile("^#")):  # a mark linking to its own place ("¶", "#")
        if not re.search(r"\w", link.get_text()):
            link.decompose()
    root = soup.find("main") or soup.find(attrs={"role": "main"}) or soup.body or soup
    outline, blocks = Outline(), []
    if title and not root.find("h1"):
        outline.enter(0, title)
    loose: list[str] = []
    loose_links = 0  # of the loose text's words, those of links

    def text(tag) -> str:  # its words, a space where a block or a line break starts, none around inline markup
        return one_line("".join(" " if isinstance(part, Tag) and part.name not in INLINE else
                                str(part) if isinstance(part, NavigableString) and not isinstance(part, Comment)
                                else "" for part in tag.descendants))

    def linked(tag) -> int:  # the words of its links
        return sum(len(a.get_text(" ").split()) for a in ([tag] if tag.name == "a" else tag.find_all("a")))

    def add(block: Block, link_words: int) -> None:
        if block.text.strip() and link_words <= NAVIGATION * len(block.text.split()):
            blocks.append(block)

    def flush() -> None:
        nonlocal loose_links
        add(Block("".join(loose), outline.path), loose_links)
        loose.clear()
        loose_links = 0

    def walk(node) -> None:
        nonlocal loose_links
        for child in node.children:
            if isinstance(child, Comment):
                continue
            if isinstance(child, NavigableString):
                loose.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name == "br":
                loose.append(" ")
            elif name in INLINE:
                loose.append(text(child))
                loose_links += linked(child)
            elif re.fullmatch(r"h[1-6]", name):
                flush()
                outline.enter(int(name[1]), text(child))
            elif name == "pre":
                flush()
                blocks.append(Block(child.get_text(), outline.path, "code"))
            elif name in ("ul", "ol"):
                flush()
                for item in child.find_all("li", recursive=False):
                    add(Block(text(item), outline.path, "item"), linked(item))
            elif name == "dl":
                flush()
                level, terms = outline.beneath(), []
                for part in child.find_all(("dt", "dd"), recursive=False):
                    if part.name == "dt":
                        terms.append(part)
                        continue
                    outline.enter(level, ", ".join(map(text, terms)))
                    walk(part)
                    flush()
                    outline.leave(level)
                    terms = []
                for term in terms:  # a term with no definition after it is text of its own
                    add(Block(text(term), outline.path, "item"), linked(term))
            elif name == "table":
                flush()
                rows = child.find_all("tr")
                header = [text(cell) for cell in rows[0].find_all(("th", "td"))] if rows and rows[0].find("th") else []
                for row in rows[1 if header else 0:]:
                    cells = [text(cell) for cell in row.find_all(("th", "td"))]
                    blocks.append(Block(table_row(header, cells), outline.path, "row"))
            elif name in ("p", "li", "dd", "dt", "caption", "figcaption", "address"):
                flush()
                add(Block(text(child), outline.path), linked(child))
            else:  # containers (div, section, blockquote …) and unknown elements: what they hold, in order
                flush()
                walk(child)
                flush()

    walk(root)
    flush()
    return blocks


# -- PDF -----------------------------------------------------------------------------------------

def pdf_text(data: bytes, path: Path) -> str:
    """The text of a PDF's bytes through pdfminer.six, a line per printed line, indented as printed (so
    that the plain-text outline finds its headings), without the lines every page repeats (running
    heads, page numbers). Raises :class:`KcardError` naming ``path`` for a PDF without a text layer."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    pages = []
    for page in extract_pages(io.BytesIO(data)):
        lines = [(line.y1, line.x0, line.height, line.get_text().strip()) for box in page
                 if isinstance(box, LTTextContainer) for line in box if line.get_text().strip()]
        pages.append(sorted(lines, key=lambda line: (-round(line[0]), line[1])))
    if not any(pages):
        raise KcardError(f"{path} has no text layer (a scanned PDF needs OCR first)")
    left = min(line[1] for page in pages for line in page)
    heights = sorted(line[2] for page in pages for line in page)
    width = heights[len(heights) // 2] / 2 or 1  # about one character
    repeated = furniture([[text for _, _, _, text in page] for page in pages])
    out = []
    for page in pages:
        for _, x0, _, text in page:
            if re.sub(r"\d+", "#", text) not in repeated:
                out.append(" " * round((x0 - left) / width) + text)
        out.append("")
    return "\n".join(out)


def furniture(pages: list[list[str]]) -> set[str]:
    """The first and last lines that recur on at least half the pages (digits ignored): running
    heads and footers, page numbers."""
    if len(pages) < 2:
        return set()
    counts: dict[str, int] = {}
    for page in pages:
        for text in {re.sub(r"\d+", "#", text) for text in page[:2] + page[-2:]}:
            counts[text] = counts.get(text, 0) + 1
    return {text for text, count in counts.items() if count >= max(2, len(pages) / 2)}


# -- man pages -----------------------------------------------------------------------------------

MAN_SECONDS = 60  # the longest groff may take to render one page


def linked_name(text: str) -> str | None:
    """The page a man page of ``text`` is a link to ("man1/systemd.1" of ".so man1/systemd.1", its one
    line); None for any other text."""
    link = MAN_LINK.fullmatch(text.strip())
    return link.group(1) if link else None


def linked_page(data: bytes, path: Path) -> tuple[bytes, Path]:
    """The roff source that man page ``path`` (holding ``data``) stands for, and its path: where the
    page is one line ".so man1/systemd.1", the page it names, looked for as man(1) does under the man
    folder above ``path``'s section folder, then beside ``path``, compressed (:data:`COMPRESSED`) or
    not, links followed up to :data:`MAN_LINKS` times; else ``data`` and ``path`` as they are. Raises
    :class:`KcardError` naming the page a link names where it is not found, and where links go on
    past :data:`MAN_LINKS`."""
    for _ in range(MAN_LINKS):
        name = linked_name(decoded(data))
        if name is None:
            return data, path
        places = [folder / (name + suffix) for folder in (path.parent.parent, path.parent) for suffix in ("", *COMPRESSED)]
        found = next((place for place in places if place.is_file()), None)
        if found is None:
            raise KcardError(f"{path} is a link to the man page {name}, which is not beside it")
        data, path = file_bytes(found), found
    raise KcardError(f"{path}: more than {MAN_LINKS} man page links in a row")


def man_text(data: bytes, path: Path) -> str:
    """A man page's roff source as ``man`` shows it, for the plain-text outline: rendered by groff
    (``-k``: its encoding read; ``-t``: tables through tbl; ``-mandoc``: man or mdoc macros) to UTF-8
    text without overstrikes or colours. Raises :class:`KcardError` naming ``path`` where groff is not
    installed or cannot render it."""
    groff = shutil.which("groff")
    if groff is None:
        raise KcardError(f"{path} is a man page (roff source), which kcard renders with groff, not installed: "
                         f"apt install groff-base, or give the page as text (man -P cat {path} > page.txt)")
    try:
        done = subprocess.run([groff, "-k", "-t", "-mandoc", "-Tutf8", "-P", "-cbou"], input=data,
                              capture_output=True, timeout=MAN_SECONDS)
    except subprocess.TimeoutExpired:
        raise KcardError(f"groff took over {MAN_SECONDS} s to render {path}") from None
    if done.returncode or not done.stdout.strip():
        raise KcardError(f"groff could not render {path}: {done.stderr.decode(errors='replace').strip()[:200]}")
    return done.stdout.decode("utf-8", errors="replace")


# -- GNU Info manuals ----------------------------------------------------------------------------

INFO_SEPARATOR = "\x1f"  # what ends one node of an Info file and starts the next
INFO_HEADER = re.compile(r"File: [^,]+,\s+Node: ")  # a node's first line: where it stands among the others
INFO_INDEX = "\x08[index\x08]"  # what marks an index node (NUL bytes left out)
INFO_MENU = re.compile(r"^\* Menu:.*$", re.M)  # what opens a node's menu of the nodes under it
INFO_ENTRY = re.compile(r"\* [^:\n]+:")  # a menu's entry: "* Node::", "* Label: Node."
INFO_NOTE = re.compile(r"\*[Nn]ote\s+([^:]+?):(?::|\s*[^.,]+[.,])")  # "*note Node::", "*note Label: Node."


def info_text(data: bytes, path: Path) -> str:
    """A GNU Info manual's text for the plain-text outline, whose underlined titles head its nodes:
    every node's text without its header line, its menu, or the node at all where it is an index;
    the preamble, tag table and local variables left out; cross references ("*note Node::", "*note
    Label: Node.") as their names. A manual split into parts (``find.info`` with an indirect table
    naming ``find.info-1`` …) is read from its parts beside it, compressed or not. Raises
    :class:`KcardError` for a part that is missing. Text with no node comes back as it is. The NUL
    bytes an Info file holds (its index marks) are left out."""
    def nodes_of(data: bytes) -> list[str]:
        return decoded(data.replace(b"\0", b"")).split(INFO_SEPARATOR)

    nodes = nodes_of(data)
    indirect = next((node for node in nodes if node.lstrip("\n").startswith("Indirect:")), None)
    if indirect is not None:
        nodes = []
        for line in indirect.strip().splitlines()[1:]:
            name = line.rpartition(":")[0].strip()
            part = next((found for found in (path.parent / (name + suffix) for suffix in ("", *COMPRESSED))
                         if found.is_file()), None)
            if part is None:
                raise KcardError(f"{path} is a manual in parts, and its part {name} is not beside it")
            nodes += nodes_of(file_bytes(part))
    texts = []
    for node in nodes:
        header, _, body = node.lstrip("\n").partition("\n")
        if INFO_HEADER.match(header) and INFO_INDEX not in body:
            texts.append(INFO_NOTE.sub(r"\1", without_menu(body)))
    return "\n\n".join(texts) if texts else INFO_SEPARATOR.join(nodes)


def without_menu(body: str) -> str:
    """An Info node's text without its menu: the paragraphs after "* Menu:" whose lines at the margin
    are entries ("* Node::", "* Label: Node."), the first of them perhaps a title over the rest, and
    one-line titles over such paragraphs. Text after the menu stays (makeinfo writes a menu where the
    source has it, before the node's text as often as after it)."""
    head, *menu = INFO_MENU.split(body, 1)
    if not menu:
        return body
    paragraphs = [paragraph for paragraph in re.split(r"\n[ \t]*\n", menu[0]) if paragraph.strip()]
    dropped = [False] * (len(paragraphs) + 1)
    for i in reversed(range(len(paragraphs))):
        lines = paragraphs[i].strip("\n").splitlines()
        entries = [bool(INFO_ENTRY.match(line)) for line in lines if not line[:1].isspace()]
        dropped[i] = (any(entries) and all(entries[1:])) or (len(lines) == 1 and dropped[i + 1])
    return "\n\n".join([head, *(paragraph for paragraph, drop in zip(paragraphs, dropped) if not drop)])


# -- plain text with an outline ------------------------------------------------------------------

BULLET = re.compile(rf"(\s*)([{MARKS}]|\(?\d{{1,3}}[.)]|\(?[a-z][.)])\s+\S")
RULE = re.compile(r"\s*([=\-~^#*+_`:.'\"])\1+\s*")
STARS = re.compile(r"(\*+)\s+(\S.*)")
NUMBERED = re.compile(r"(\d+(?:\.\d+)*)\.?\s+[A-Z]\S.*")
LINK = re.compile(r"\s*<?[a-z][a-z+.-]*://\S+>?\s*")  # a line that is a link alone
TERM = re.compile(r"(\s*)(\S+(?: \S+)*?) {2,}(\S.*)")  # a term, two spaces or more, then its text
TERM_CHARS = 30  # a term beside its text is at most this long ("-t {tag}", "--echo-wid", "file ..")
FILLED = 0.8  # a line of a filled paragraph is at least this share of the text's widest line


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def without_running_head(lines: list[str]) -> list[str]:
    """``lines`` with their first line of text blanked where it is a page's running head, not its text:
    it starts and ends with the same words, set apart by two spaces or more ("GREP(1)    User Commands
    GREP(1)", as groff renders a man page's head)."""
    top = next((i for i, line in enumerate(lines) if line.strip()), None)
    if top is None or len(ends := re.split(r"\s{2,}", lines[top].strip())) < 2 or ends[0] != ends[-1]:
        return lines
    return [*lines[:top], "", *lines[top + 1:]]


def first_lines_set_back(lines: list[str]) -> list[str]:
    """``lines`` with each paragraph's first line indented deeper than the rest (as GNU Info and many
    plain-text books indent a paragraph) set back to the rest's indent. A first line counts so after
    a blank line, over lines at one lesser indent, when it is filled (:data:`FILLED`: it reaches at
    least that share of their width)."""
    lines = list(lines)
    for i in range(len(lines) - 1):
        if not lines[i].strip() or (i and lines[i - 1].strip()) or not lines[i + 1].strip():
            continue
        rest = indent(lines[i + 1])
        run = [line.rstrip() for line in itertools.takewhile(lambda line: line.strip() and indent(line) == rest,
                                                            lines[i + 1:])]
        if rest < indent(lines[i]) and len(lines[i].rstrip()) >= FILLED * max(map(len, run)):
            lines[i] = " " * rest + lines[i].lstrip()
    return lines


def hanging_terms(lines: list[str]) -> dict[int, int]:
    """The lines that open with a term whose text hangs beside it, by index: the column where the
    text starts. A man page's options and exit codes read so ("-b          Binary mode.  A few …",
    continued under "Binary"). A line is such a term over its text when the next line is indented
    to the column after a gap of two spaces or more, and no text after its own is indented between
    the two (as under "2021-04-28  A Person" over "            B Person" in a GNU ChangeLog: a
    title). Then, at the same indent and column, so is a term that fills its column (one space
    before the text) on a filled line (:data:`FILLED`) over text continued there ("-d {device}
    Open …"), and a term that ends no sentence two spaces or more beside one line of text ("-L
    Same as -r.") before another term or a blank line, with no deeper text after it."""
    width = max(map(len, lines), default=0)
    below = [None] * len(lines)  # the indent of the next line, if it is not blank
    later = [0] * len(lines)  # the indent of the next line of text
    for i in reversed(range(len(lines) - 1)):
        below[i] = indent(lines[i + 1]) if lines[i + 1].strip() else None
        later[i] = later[i + 1] if below[i] is None else below[i]

    def outside(i: int, column: int) -> bool:  # text after the term's, indented between the two (a title's)
        j = next((j for j in range(i + 1, len(lines)) if lines[j].strip() and indent(lines[j]) < column), None)
        return j is not None and indent(lines[i]) < indent(lines[j])

    found: dict[int, int] = {}
    for i, line in enumerate(lines):
        match = TERM.fullmatch(line)
        if (match and len(match.group(2)) <= TERM_CHARS and not BULLET.match(line) and below[i] == match.start(3)
                and not outside(i, match.start(3))):
            found[i] = match.start(3)
    columns: dict[int, set[int]] = {}  # the text columns of those terms, by their indent
    for i, column in found.items():
        columns.setdefault(indent(lines[i]), set()).add(column)
    for i in reversed(range(len(lines))):
        line, at = lines[i], indent(lines[i])
        if i in found or not line.strip() or BULLET.match(line):
            continue
        for column in sorted(column for column in columns.get(at, ()) if column < len(line)):
            term = line[at:column].rstrip()
            if line[column - 1] != " " or line[column] == " " or not term or len(term) > TERM_CHARS:
                continue
            filled = below[i] == column and len(line) >= FILLED * width
            one_line = (line[column - 2] == " " and not term.endswith((".", "!", "?", ":", ",", ";"))
                        and (below[i] is None and later[i] <= at or i + 1 in found and below[i] == at))
            if (filled or one_line) and not outside(i, column):
                found[i] = column
                break
    return found


def set_left(paragraph: list[str]) -> bool:
    """Whether the first line of ``paragraph`` starts left of all the others."""
    return indent(paragraph[0]) < min(map(indent, paragraph[1:]))


def column_starts(paragraph: list[str]) -> list[int]:
    """Where the columns of ``paragraph`` start: 0, then after each gutter (two columns or more blank
    in every line) with text on both sides in every line; where there is one, after each gutter too
    after which the first line goes on and others end (a column that some rows leave empty)."""
    width = max(map(len, paragraph))
    blank = "".join(" " if all(p >= len(line) or line[p] == " " for line in paragraph) else "x" for p in range(width))
    gaps = [gap for gap in re.finditer(r" {2,}", blank) if gap.end() < width
            and all(line[:gap.start()].strip() for line in paragraph)]
    after = {gap.end(): [bool(line[gap.end():].strip()) for line in paragraph] for gap in gaps}
    if not any(all(goes_on) for goes_on in after.values()):
        return [0]
    return [0, *(end for end, goes_on in after.items() if goes_on[0])]


def table_rows(lines: list[str]) -> dict[int, str]:
    """The lines of tables laid out in columns, by index: each row as :func:`table_row` reads it, its
    header row (the first, when a rule is under it, it is set left of all the rows, or it alone holds
    no digit) and rule as "". A table is a paragraph (lines between blank ones, less a title indented
    less than all after it that the columns do not run through) of three lines or more with a gutter
    (:func:`column_starts`)."""
    rows: dict[int, str] = {}
    start = 0
    for end in range(len(lines) + 1):
        if end < len(lines) and lines[end].strip():
            continue
        while (end - start > 3 and set_left(lines[start:end])
               and len(column_starts(lines[start:end])) < max(2, len(column_starts(lines[start + 1:end])))):
            start += 1  # a heading over the table, not its header row (whose columns hold the table's)
        paragraph, first, start = lines[start:end], start, end + 1
        if len(paragraph) < 3:
            continue
        bounds = column_starts(paragraph)
        if len(bounds) < 2:
            continue
        cells = [[line[a:b].strip() for a, b in zip(bounds, [*bounds[1:], len(line)])] for line in paragraph]
        numbers = [any(ch.isdigit() for cell in row for ch in cell) for row in cells]
        ruled = all(RULE.fullmatch(cell) for cell in cells[1])  # "Command  Old Result" over "-------  ----------"
        header = cells[0] if ruled or set_left(paragraph) or not numbers[0] and any(numbers) else []
        for k, row in enumerate(cells):
            rows[first + k] = "" if k < bool(header) + ruled else table_row(header, row)
    return rows


def star_lines(lines: list[str]) -> dict[int, int]:
    """The lines of a ``*`` / ``**`` outline (GNU NEWS style), by index: each heading's level, 0 for
    an item. A depth's level is the order in which it first appears (``***`` may head ``*``). A star
    line is a heading when what follows it is its own: text after a blank line (unless it ends a
    sentence, or the next star line is of its level and heads nothing: then the text is that line's
    lead-in, "What's new in 2.1:" after the last item of 2.2), or a star line of a deeper level. It
    is an item when its text runs on to the next line, or when a star line of its level or above
    follows, unless it opens with the same two words as two or more of its level's headings
    ("Changes in Wget 1.19.5" over single-star items, like "Changes in Wget 1.20" over double-star
    ones)."""
    found = {i: (len(match.group(1)), match.group(2)) for i, line in enumerate(lines)
             if (match := STARS.fullmatch(line))}
    depths = list(dict.fromkeys(depth for depth, _ in found.values()))
    level = {i: 1 + depths.index(depth) for i, (depth, _) in found.items()}

    def opening(i: int) -> tuple[str, ...]:
        return tuple(found[i][1].lower().split()[:2])

    kind: dict[int, str] = {}
    for i, (_, title) in found.items():
        after = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
        text_follows = after is not None and after not in found
        if after is None or text_follows and (after == i + 1 or title.endswith(".")):
            kind[i] = "item"  # the last line, one whose text runs on to the next line, a sentence over text
        elif text_follows or level[after] > level[i]:
            kind[i] = "heading"
        else:
            kind[i] = "leaf"
    order = list(found)  # in reading order; from the end back, so that a demoted line demotes the one before
    for i, later in reversed(list(zip(order, order[1:]))):  # text before an item of its level leads to it
        if kind[i] == "heading" and level[later] == level[i] and kind[later] != "heading":
            kind[i] = "item"
    openings = Counter((level[i], opening(i)) for i in found if kind[i] == "heading")
    return {i: level[i] if kind[i] == "heading" or kind[i] == "leaf" and openings[level[i], opening(i)] >= 2 else 0
            for i in found}


def underlined(lines: list[str], i: int) -> bool:
    """Whether the rule under ``lines[i]`` makes it a heading: always where the line opens its paragraph
    (after a blank line, an overline or nothing), after a line of text only a rule under most of it (a
    merge conflict's ``=======`` in an example is text)."""
    before = lines[i - 1] if i else ""
    return not before.strip() or bool(RULE.fullmatch(before)) or 2 * len(lines[i + 1].strip()) > len(lines[i].strip())


def outline_blocks(content: str) -> list[Block]:
    """Plain text whose structure is in its layout (NEWS files, changelogs, man pages as text):

    - a line underlined (or over- and underlined) with ``=``, ``-``, ``~`` … is a heading, its level
      the order in which its underline first appears, where the underline counts (:func:`underlined`);
    - a ``*`` / ``**`` line at the start of a line is a heading or an item (:func:`star_lines`);
    - a numbered title ("2.1 Building") followed by a blank line is a heading of that depth;
    - a man page's running head is left out (:func:`without_running_head`);
    - a paragraph's first line indented deeper than the rest reads at their indent
      (:func:`first_lines_set_back`);
    - a short line followed by lines indented deeper is a heading for them ("OPTIONS", "-v,
      --invert-match" in a man page; "tmux (3.3a-3) unstable" in a Debian changelog), and so is a
      term beside the text it heads (:func:`hanging_terms`: "-b          Binary mode."); where that
      line ends a paragraph, the paragraph's last sentence is the heading (a lead-in "… is used:",
      several terms over one text: "'-q'" / "'--quiet'" in an Info manual);
    - a paragraph laid out in columns is a table, a row a block (:func:`table_rows`);
    - a short line that ends no sentence over list items is their heading ("Bug fixes:",
      "2022-04-10: v1.0.26"), and such a line alone over that heading heads both ("2022.07.12,
      Version 1.44.2" over "Changes since version 1.44.1:"), as does a line alone that opens with the
      same word at the same indentation as one of those, over whatever text ("Version 1.44.1" over
      "A bug fix release.");
    - a list item (``-``, ``*``, ``•``, ``1.`` …) with its indented continuation is one block, a
      paragraph (lines up to a blank line or a change of indentation) another.
    """
    lines = first_lines_set_back(without_running_head(content.expandtabs(8).splitlines()))
    starred, rows, terms = star_lines(lines), table_rows(lines), hanging_terms(lines)
    rules: list[str] = []
    outline, blocks = Outline(), []
    soft: list[tuple[float, str, bool]] = []  # (indent, title, lead-in): soft headings under the outline
    block: list[str] = []
    block_kind, block_indent, body_indent = "text", 0, 0

    def next_text(i: int) -> int:  # the next line of text; a link alone stands aside from the outline
        while i < len(lines) and (not lines[i].strip() or LINK.fullmatch(lines[i])):
            i += 1
        return i

    def path() -> tuple[str, ...]:
        return outline.path + tuple(title for _, title, _ in soft)

    def titles(j: int) -> bool:  # short, and ending in ":" or else neither a sentence's end nor a list item
        text = lines[j].strip()
        ends = text.endswith((".", ",", ";")) or BULLET.match(lines[j]) or LINK.fullmatch(text)
        return len(text) < 100 and (text.endswith(":") or not ends)

    def leads_in(j: int) -> bool:  # a title over list items
        later = next_text(j + 1)
        return (titles(j) and later < len(lines) and bool(BULLET.match(lines[later]))
                and indent(lines[later]) >= indent(lines[j]))

    def alone(j: int) -> bool:  # a title with a blank line after it
        return titles(j) and not BULLET.match(lines[j]) and next_text(j + 1) > j + 1

    def named(j: int) -> tuple[int, str] | None:  # a title alone that leads in to nothing: its indent, first word
        if alone(j) and not lines[j].rstrip().endswith(":"):
            return indent(lines[j]), lines[j].split()[0].lower()
        return None

    stacked = [0] * len(lines)  # titles alone at one indent, each over the next, down to a lead-in: how many
    for j in reversed(range(len(lines))):
        later = next_text(j + 1)
        if lines[j].strip() and alone(j) and later < len(lines) and indent(lines[later]) == indent(lines[j]):
            stacked[j] = 1 if leads_in(later) else stacked[later] + 1 if stacked[later] else 0
    series: dict[tuple[int, str], int] = {}  # the openings of stacked titles, and their depth
    for j in range(len(lines)):
        if stacked[j] and (name := named(j)):
            series.setdefault(name, stacked[j])

    def depth(j: int) -> int:  # a title over a lead-in, over another such title, or like one: how deep; else 0
        if stacked[j] and (named(j) in series or not leads_in(j)):
            return stacked[j]
        return series.get(named(j), 0)

    def joined(lines: list[str]) -> str:  # lines as one, a typesetter's hyphenation undone
        return re.sub(r"[\u2010\u00ad] ", "", " ".join(line.strip() for line in lines))

    def flush() -> None:
        nonlocal block
        if block:
            blocks.append(Block(joined(block), path(), block_kind))
        block = []

    def heading(level: float, title: str) -> None:
        flush()
        soft.clear()
        outline.enter(level, title)

    def soft_heading(at: float, title: str, lead: bool = False) -> None:
        flush()
        while soft and soft[-1][0] >= at:
            soft.pop()
        soft.append((at, one_line(title), lead))

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if not stripped:
            flush()
            i += 1
            continue
        if RULE.fullmatch(line):  # a rule alone (an overline, a separator)
            flush()
            i += 1
            continue
        at = indent(line)
        if RULE.fullmatch(following) and len(stripped) < 120 and underlined(lines, i):
            mark = following.strip()[0]
            if mark not in rules:
                rules.append(mark)
            heading(1 + rules.index(mark), stripped)
            i += 2
            continue
        after = lines[i + 1] if i + 1 < len(lines) else ""
        blank_after = not after.strip()
        if i in starred:
            level = starred[i]
            if level:
                heading(10 + level, STARS.fullmatch(line).group(2))
                i += 1
                continue
            flush()  # an outline item: the line and its continuation up to a blank line or the next star line
            block, block_kind = [line], "item"
            i += 1
            while i < len(lines) and lines[i].strip() and i not in starred and not RULE.fullmatch(lines[i]):
                block.append(lines[i])
                i += 1
            flush()
            continue
        if at == 0 and NUMBERED.fullmatch(stripped) and blank_after and len(stripped) < 80 and not stripped.endswith("."):
            heading(20 + stripped.split()[0].rstrip(".").count("."), stripped)
            i += 1
            continue
        while soft and at <= soft[-1][0] and not (soft[-1][2] and (BULLET.match(line) or LINK.fullmatch(line))):
            flush()  # the text has come back out of a soft heading's scope
            soft.pop()
        if i in rows:  # a table row, a block of its own (its header row is in the rows after it), read as
            # an item so that it ends its sentence
            flush()
            block, block_kind = [rows[i]] if rows[i] else [], "item"
            flush()
            i += 1
            continue
        if i in terms:  # a term over its text: the term heads it
            soft_heading(at, line[:terms[i]].strip())
            block, block_kind, block_indent, body_indent = [line[terms[i]:]], "text", terms[i], terms[i]
            i += 1
            continue
        nxt = next_text(i + 1)
        later = lines[nxt] if nxt < len(lines) else ""
        if not block and (deep := depth(i)):  # the lead-in and the titles under it stay under it
            soft_heading(at - 1 + 0.5 ** deep, stripped)
            i += 1
            continue
        if not block and leads_in(i):
            soft_heading(at, stripped, lead=True)
            i += 1
            continue
        in_item = block and block_kind == "item" and at >= body_indent
        if (not in_item and later.strip() and indent(later) > at and len(stripped) < 80 and not BULLET.match(line)
                and not stripped.endswith((".", ","))):
            if block and block_kind == "text" and at == block_indent:  # the paragraph's last sentence heads it
                *before, stripped = sentences(joined([*block, line]))
                block = [" ".join(before)] if before else []
            soft_heading(at, stripped)
            i += 1
            continue
        bullet = BULLET.match(line)
        if bullet:
            flush()
            block, block_kind, block_indent = [line], "item", at
            body_indent = at + 1
            i += 1
            continue
        if block and (at == block_indent or (block_kind == "item" and at >= body_indent)):
            block.append(line)
        else:
            flush()
            block, block_kind, block_indent, body_indent = [line], "text", at, at
        i += 1
    flush()
    return blocks


def paragraph_blocks(content: str) -> list[Block]:
    return [Block(part) for part in re.split(r"\n\s*\n", content)]


def line_blocks(content: str) -> list[Block]:
    return [Block(line) for line in content.splitlines()]


READERS: dict[str, Callable[[str], list[Block]]] = {
    "markdown": markdown_blocks, "rst": rst_blocks, "html": html_blocks, "text": outline_blocks,
    "paragraphs": paragraph_blocks, "lines": line_blocks}


# -- what a corpus is about ----------------------------------------------------------------------

def describe(passages: list[Passage], name: str = "") -> tuple[str, str]:
    """(subject, description) proposed for a card over ``passages``, named ``name``.

    The subject is the name the text opens by saying what it is ("The Eiffel Tower is …"),
    else ``name`` when the text holds each of its words (a card named after what it documents),
    else the document's title (the heading that opens most passages) when it is short; else empty.
    The description is the subject or title, the files, and the first top-level headings."""
    from kcard_core.retrieval import subject as opening_subject

    roots = Counter(passage.headings[0] for passage in passages if passage.headings).most_common(1)
    title = roots[0][0] if roots and roots[0][1] > len(passages) / 2 else ""
    words = set(WORD.findall(" ".join(passage.contextual() for passage in passages).lower()))
    named = name if name and all(word in words for word in re.findall(r"[a-z0-9]+", name.lower())) else ""
    subject = (opening_subject([passage.text for passage in passages]) or named
               or (title if len(title.split()) <= 6 else ""))
    sections = list(dict.fromkeys(passage.headings[1 if title else 0] for passage in passages
                                  if len(passage.headings) > (1 if title else 0)))
    files = list(dict.fromkeys(passage.source for passage in passages if passage.source))
    about = subject or title or name
    parts = [f"{about} ({first(files, 3, ', ')})" if files else about, first(sections, 4, "; ")]
    return subject, one_line(": ".join(part for part in parts if part))[:240]


def first(items: list[str], count: int, separator: str) -> str:
    """The first ``count`` of ``items`` joined, "…" after them when there are more."""
    return separator.join(items[:count] + ["…"] * (len(items) > count))
