"""Document readers: each format's structure becomes passages that carry their heading path and source."""

import shutil
from pathlib import Path

import pytest

from kcard_core.documents import (Block, Passage, chunk, describe, format_of, passages_jsonl, read_corpus,
                                  read_passages)
from kcard_core.errors import KcardError

DATA = Path(__file__).parent / "data" / "documents"


def read(tmp_path, name: str, content: str, format: str = "auto") -> list[Passage]:
    path = tmp_path / name
    path.write_text(content)
    return read_passages(path, format)


def test_markdown_headings_lists_tables_and_code(tmp_path):
    passages = read(tmp_path, "README.md", """# widgetlib

A library of widgets. <img src="badge.svg"> Fast.

## Install

```
pip install widgetlib
```

## Changelog

### 2.0.0 (2024-05-01)

- Dropped support for Python 3.7.
- New `frob()` function.

| option | default |
|--------|---------|
| width  | 72      |
""", "auto")
    by_text = {p.text: p.headings for p in passages}
    assert by_text["A library of widgets. Fast."] == ("widgetlib",)
    assert by_text["pip install widgetlib"] == ("widgetlib", "Install")
    merged = next(p for p in passages if "Python 3.7" in p.text)
    assert merged.headings == ("widgetlib", "Changelog", "2.0.0 (2024-05-01)") and "frob()" in merged.text
    assert merged.contextual().startswith("widgetlib › Changelog › 2.0.0 (2024-05-01): Dropped support")
    assert any(p.text.endswith("option: width; default: 72") for p in passages)  # a row with its header
    assert all(p.source == "README.md" for p in passages)


def test_rst_sections_lists_literal_blocks_and_tables(tmp_path):
    passages = read(tmp_path, "README.rst", """=========
gadgetlib
=========

Turns widgets into gadgets.

Usage
=====

Run it like this::

    gadget --width 80

Width
    Columns of output.
    Wider than 200 is refused.

Changelog
=========

1.2.0 (2023-01-02)
------------------

* Removed the ``--old`` option.
* Faster.

=====  =======
name   default
=====  =======
width  72
=====  =======

.. unknown-directive:: ignored
""")
    by_text = {p.text: p.headings for p in passages}
    assert by_text["Turns widgets into gadgets."] == ("gadgetlib",)
    assert any(h == ("gadgetlib", "Usage") and "gadget --width 80" in t for t, h in by_text.items())
    assert by_text["Columns of output. Wider than 200 is refused."] == ("gadgetlib", "Usage", "Width")
    release = next(p for p in passages if "--old" in p.text)
    assert release.headings == ("gadgetlib", "Changelog", "1.2.0 (2023-01-02)")
    assert any("name: width; default: 72" in p.text for p in passages)


def test_html_leaves_out_styles_scripts_and_navigation(tmp_path):
    passages = read(tmp_path, "page.html", """<!DOCTYPE html><html><head><title>frob manual</title>
<style>body { margin: 0; line-height: 1.5; }</style><script>var x = 1;</script></head>
<body><nav><ul><li>Home</li><li>Other chapter</li></ul></nav>
<main><div class="header"><p>Next: <a href="b.html">Frob Hooks</a>, Up: <a href="i.html">Top</a>
[<a href="x.html">Index</a>]</p></div>
<h1>frob</h1><ul class="toc"><li><a href="#o">Options</a></li><li><a href="#e">Examples</a></li></ul>
<p>frob turns <code>widgets</code> into gadgets.</p><p>See <a href="c.html">frob-config</a> for the settings file.</p>
<h2>Options<a class="headerlink" href="#options">¶</a></h2>
<dl><dt><code>-q</code></dt><dd>Print nothing.</dd><dt>-w N</dt><dd>Width, 72 by default.</dd><dt>-z</dt></dl>
<h3>Examples</h3><pre>frob -q in.txt
frob -w 80 in.txt</pre>
<table><tr><th>code</th><th>meaning</th></tr><tr><td>3</td><td>unreadable widget</td></tr></table>
<ul><li>Parts<ul><li><span><a href="#a">Part A</a></span></li><li>Part B</li></ul></li></ul>
</main><footer>© someone</footer></body></html>""")
    texts = " ".join(p.contextual() for p in passages)
    assert "margin" not in texts and "var x" not in texts and "Other chapter" not in texts and "©" not in texts
    # blocks mostly of links are navigation (the contents list would have come first); a link in a sentence stays
    assert "Frob Hooks" not in texts
    assert passages[0].contextual().startswith("frob: frob turns widgets into gadgets. See frob-config for the")
    # a definition list's term heads its definition, as a heading does
    assert {p.contextual() for p in passages} >= {"frob › Options › -q: Print nothing.",
                                                  "frob › Options › -w N: Width, 72 by default."}
    assert any(p.headings == ("frob", "Options") and p.text.startswith("-z") for p in passages)  # no definition
    code = next(p for p in passages if "frob -w 80" in p.text)
    assert code.headings == ("frob", "Options", "Examples") and "frob -q in.txt" in code.text
    assert any("code: 3; meaning: unreadable widget" in p.text for p in passages)
    assert any(p.text.endswith("Parts Part A Part B.") for p in passages)  # a nested list's words, not its markup
    assert "<" not in texts


def test_pdf_man_page_keeps_its_sections_and_options():
    passages = read_passages(DATA / "frob.pdf")
    found = {p.contextual() for p in passages}
    assert "OPTIONS › -w, --width=width: Make every gadget this many columns wide; the default is 72." in found
    assert "EXIT STATUS: The exit status is 3 when a widget cannot be read." in found


def test_a_real_news_file_puts_each_change_under_its_release():
    passages = read_passages(DATA / "mpfr-NEWS")
    cosu = next(p for p in passages if "mpfr_cosu" in p.text)
    assert cosu.headings == ("Changes from versions 4.1.* to version 4.2.0:",)
    assert cosu.contextual().startswith("Changes from versions 4.1.* to version 4.2.0: ")
    assert all(len(p.text) <= 600 for p in passages)


@pytest.mark.parametrize("content, expected", [
    # GNU outline headings
    ("* Noteworthy changes in release 1.10 (2019-02-10)\n\nSupport for VMS was removed.\n\n"
     "* Noteworthy changes in release 1.9 (2018-01-01)\n\nA fix.\n",
     [(("Noteworthy changes in release 1.10 (2019-02-10)",), "Support for VMS was removed."),
      (("Noteworthy changes in release 1.9 (2018-01-01)",), "A fix.")]),
    # items with one star more than their release, one running on to a second line; then a release whose items
    # have its own single star, told from it by opening like the other releases
    ("* Changes in Foo 2.1\n\n** Add --bar\n\n** Remove alloca\n   from the parser\n\n"
     "* Changes in Foo 2.0\n\n** Fix a leak\n\n* Changes in Foo 1.9\n\n* New option --baz\n\n* Fix a crash\n\n"
     "* Changes in Foo 1.8\n\n* Older\n",
     [(("Changes in Foo 2.1",), "Add --bar. Remove alloca from the parser."),
      (("Changes in Foo 2.0",), "Fix a leak."), (("Changes in Foo 1.9",), "New option --baz. Fix a crash."),
      (("Changes in Foo 1.8",), "Older.")]),
    # three stars heading one-star items and one-star sections: a depth's level is the order it first appears in
    ("*** Changes in Bar 13\n\n* Item one.\n\n* New commands\n\n  info frob\n\n*** Changes in Bar 12\n\n* Item two.\n",
     [(("Changes in Bar 13",), "Item one."), (("Changes in Bar 13", "New commands"), "info frob"),
      (("Changes in Bar 12",), "Item two.")]),
    # star items under release lines that are no star lines: a last item with no full stop does not head the
    # next release's line; a release line over items heads them, with or without a colon
    ("What's new in Baz 2.1:\n\n* Fix a crash\n\n* Tidy the headers\n\n"
     "What's new in Baz 2.0:\n\n* Older\n\n2019-01-01: v1.9\n* Oldest\n",
     [(("What's new in Baz 2.1:",), "Fix a crash. Tidy the headers."),
      (("What's new in Baz 2.0:",), "Older."), (("2019-01-01: v1.9",), "Oldest.")]),
    # underlined headings (any length of rule) and a lead-in line over bullet items with continuations (the
    # bullets left out)
    ("dbus 1.2 (2020-01-01)\n==\n\nBug fixes:\n\n• Fix a crash\n  on exit.\n\n• Fix a leak.\n\nOld\n---\n\nText.\n",
     [(("dbus 1.2 (2020-01-01)", "Bug fixes:"), "Fix a crash on exit. Fix a leak."),
      (("dbus 1.2 (2020-01-01)", "Old"), "Text.")]),
    # after a line of text, a rule under most of the next line underlines it (a title right after a
    # paragraph); a short one is text (a merge conflict in an option's example), and heads nothing after it
    ("Foo 1.3 (2021)\n==============\n\nTranslations.\nFoo 1.2 (2020)\n=============\n\nFaster.\n",
     [(("Foo 1.3 (2021)",), "Translations."), (("Foo 1.2 (2020)",), "Faster.")]),
    ("OPTIONS\n       --merge\n              Bracket the conflict:\n\n                  <<<<<<<\n"
     "                  ours\n                  |||||||\n                  lines from the patch\n"
     "                  =======\n                  theirs\n                  >>>>>>>\n\n"
     "       -r file\n              Put rejects into file.\n",
     [(("OPTIONS", "--merge", "Bracket the conflict:"), "<<<<<<< ours ||||||| lines from the patch theirs >>>>>>>"),
      (("OPTIONS", "-r file"), "Put rejects into file.")]),
    # a release line alone over a lead-in line heads it and its items, up to the next release line; a
    # paragraph that ends a sentence heads nothing
    ("2024.02.01, Version 1.5.0 (Stable)\n\nChanges since version 1.4.0:\n\n* Add frob (A Person)\n\n"
     "* Fix a leak (B Person)\n\n2023.10.09, Version 1.4.0 (Stable)\n\nChanges since version 1.3.0:\n\n"
     "* Older (C Person)\n\nA closing remark.\n\nThanks to:\n\n* Everyone\n",
     [(("2024.02.01, Version 1.5.0 (Stable)", "Changes since version 1.4.0:"),
       "Add frob (A Person). Fix a leak (B Person)."),
      (("2023.10.09, Version 1.4.0 (Stable)", "Changes since version 1.3.0:"), "Older (C Person)."),
      (("2023.10.09, Version 1.4.0 (Stable)",), "A closing remark."),
      (("2023.10.09, Version 1.4.0 (Stable)", "Thanks to:"), "Everyone.")]),
    # a title line like one over a lead-in (its opening word, its indentation) heads what follows it too,
    # the file's first line included; a line ending in a colon stays a lead-in
    ("Foo 3.1\n\nA bug fix release.\n\n * Fix a crash\n\nFoo 3.0\n\nChanges at a glance:\n\n * New frob\n\n"
     "Foo 2.9\n\nA bug fix release.\n\n * Fix a leak\n\nFoo tips:\n\nBe brief.\n",
     [(("Foo 3.1",), "A bug fix release. Fix a crash."), (("Foo 3.0", "Changes at a glance:"), "New frob."),
      (("Foo 2.9",), "A bug fix release. Fix a leak. Foo tips: Be brief.")]),
    # titles alone, each over the next down to a lead-in, nest; a later title like the first heads its items;
    # a link alone is text, never a title, and stands aside: the lead-in over it leads in to the items after it
    ("Version 2.0 (2020)\n\nA list of fixes is here:\n\nhttps://example.org/2.0\n\n* Faster.\n\n"
     "Version 1.9 (2019)\n\nSee also:\n\nSome notes\n\n* Older.\n",
     [(("Version 2.0 (2020)", "A list of fixes is here:"), "https://example.org/2.0 Faster."),
      (("Version 1.9 (2019)", "See also:", "Some notes"), "Older.")]),
    # a man page rendered to text: sections and options by indentation, typesetter's hyphens joined
    ("NAME\n       frob - make gadgets\n\nOPTIONS\n       -q, --quiet\n              Print noth\u2010\n"
     "              ing.\n\n       -w N   Width.\n",
     [(("NAME",), "frob - make gadgets"), (("OPTIONS", "-q, --quiet"), "Print nothing."),
      (("OPTIONS",), "-w N Width.")]),
    # terms beside their text head it: over text continued under it, filling their column on a filled line,
    # beside one line before a blank line or the next term; a line that ends a sentence is no term
    ("OPTIONS\n       -b          Binary mode.  A few options are set that make it\n"
     "                   possible to edit a binary file.\n\n"
     "       -d {device} Open {device} for use as a terminal; only on the Amiga,\n                   the old way.\n\n"
     "       -L          Same as -r.\n\n       Note that:  options combine.\n\n"
     "EXIT STATUS\n       0           All is good.\n       1           An error occurred.\n",
     [(("OPTIONS", "-b"), "Binary mode. A few options are set that make it possible to edit a binary file."),
      (("OPTIONS", "-d {device}"), "Open {device} for use as a terminal; only on the Amiga, the old way."),
      (("OPTIONS", "-L"), "Same as -r."), (("OPTIONS",), "Note that: options combine."),
      (("EXIT STATUS", "0"), "All is good."), (("EXIT STATUS", "1"), "An error occurred.")]),
    # a paragraph laid out in columns is a table, a row an item: with the header row that has no digit where
    # the others have, or that is over a rule, in front of each cell; without one, the cells alone
    ("VERSIONS\n       v1.2   15 Mar 89   A. Person\n       v2.0    9 Sep 89   A. Person\n"
     "       v5.4   28 Nov 98   The Group\n\nPRESETS\n       Preset   Memory\n         -0      3 MiB\n"
     "         -9    674 MiB\n\nCALLS\n    Command          Result\n    -------          ------\n"
     "    $(suffix a.b)    b\n",
     [(("VERSIONS",), "v1.2; 15 Mar 89; A. Person. v2.0; 9 Sep 89; A. Person. v5.4; 28 Nov 98; The Group."),
      (("PRESETS",), "Preset: -0; Memory: 3 MiB. Preset: -9; Memory: 674 MiB."),
      (("CALLS",), "Command: $(suffix a.b); Result: b.")]),
    # a header row set left of its right-aligned cells heads them, digits and all; a column may be empty in
    # some rows; a line over a table that the columns do not run through heads it
    ("LEVELS\n       Level    xz      Utils 4.32\n         -0     3 MiB      N/A\n         -1     9 MiB\n"
     "         -9   674 MiB  311 MiB\n\nSIZES\n    Sizes in use today:\n      small    1 KiB\n      medium   8 KiB\n"
     "      large   64 KiB\n",
     [(("LEVELS",), "Level: -0; xz: 3 MiB; Utils 4.32: N/A. Level: -1; xz: 9 MiB. "
                    "Level: -9; xz: 674 MiB; Utils 4.32: 311 MiB."),
      (("SIZES", "Sizes in use today:"), "small; 1 KiB. medium; 8 KiB. large; 64 KiB.")]),
    # a GNU ChangeLog: a date and author line over a second author at the first's column is a title, no term
    ("2021-04-28  A Person  <a@b.org>\n            B Person  <b@c.org>\n\n\t* frob.c (main): Fix a leak.\n",
     [(("2021-04-28 A Person <a@b.org>",), "B Person <b@c.org> frob.c (main): Fix a leak.")]),
    # a Debian changelog: the entry's header line over its items and trailer
    ("tmux (3.3a-3) unstable; urgency=medium\n\n  * Update a tag.\n\n -- A Person <a@b.org>  Mon, 01 Jan 2024\n\n"
     "tmux (3.3a-2) unstable; urgency=medium\n\n  * Older.\n",
     [(("tmux (3.3a-3) unstable; urgency=medium",), "Update a tag. -- A Person <a@b.org> Mon, 01 Jan 2024"),
      (("tmux (3.3a-2) unstable; urgency=medium",), "Older.")]),
    # GNU Info's text: a paragraph's first line indented deeper than the rest; a paragraph's last sentence
    # over an example heads it; several terms over one text head it together
    ("1.1 Options\n===========\n\n'frob' reads its knobs from a panel at start.  The default format\n"
     "built into 'frob' is:\n\n     %k knob\n\n   A second paragraph starts indented and then\ngoes on at the margin.\n\n"
     "'-q'\n'--quiet'\n     Print nothing.\n",
     [(("1.1 Options",), "'frob' reads its knobs from a panel at start."),
      (("1.1 Options", "The default format built into 'frob' is:"), "%k knob"),
      (("1.1 Options",), "A second paragraph starts indented and then goes on at the margin."),
      (("1.1 Options", "'-q' '--quiet'"), "Print nothing.")]),
    # a man page's running head is left out
    ("FROB(1)            User Commands            FROB(1)\n\nNAME\n       frob - make gadgets\n",
     [(("NAME",), "frob - make gadgets")]),
    # no structure at all: its paragraphs, never merged; one passage a line without a blank line
    ("A para\nwrapped.\n\n  \nB para.", [((), "A para wrapped."), ((), "B para.")]),
    ("One fact.\nTwo fact.\n", [((), "One fact."), ((), "Two fact.")]),
])
def test_plain_text_outlines(tmp_path, content, expected):
    assert [(p.headings, p.text) for p in read(tmp_path, "NEWS", content)] == expected


def test_a_markdown_changelog_without_an_extension_is_read_as_markdown(tmp_path):
    passages = read(tmp_path, "changelog", "# Changelog\n\n## 1.2.0 - 2024-01-02\n\n- Faster.\n\n"
                                           "## 1.1.0 - 2023-05-06\n\n- Smaller.\n")
    assert [(p.headings, p.text) for p in passages] == [
        (("Changelog", "1.2.0 - 2024-01-02"), "Faster."), (("Changelog", "1.1.0 - 2023-05-06"), "Smaller.")]
    # a comment block of "#" lines (a Debian changelog's trimmed tail) is no Markdown
    passages = read(tmp_path, "changelog", "foo (1.2-1) unstable; urgency=medium\n\n  * Faster.\n\n"
                                           "# Older entries have been removed.\n# See the full changelog.\n")
    assert passages[0].headings == ("foo (1.2-1) unstable; urgency=medium",)


@pytest.mark.parametrize("format, text, expected", [
    ("paragraphs", "One fact.\nTwo fact.\n", ["One fact. Two fact."]),
    ("lines", "A\n\nB\n", ["A", "B"]),
])
def test_forced_formats(tmp_path, format, text, expected):
    path = tmp_path / "corpus.txt"
    path.write_text(text)
    assert read_corpus(path, format) == expected


def test_chunk_merges_a_sections_blocks_up_to_the_size_and_cuts_long_ones_at_sentences():
    blocks = [Block("a" * 50, ("H",)), Block("b" * 50, ("H",)), Block("c" * 50, ("G",)), Block("d" * 50),
              Block("e" * 50), Block("First sentence here. " * 10, ("H",))]
    passages = chunk(blocks, size=120)
    assert passages[:4] == [(("H",), "a" * 50 + " " + "b" * 50), (("G",), "c" * 50), ((), "d" * 50), ((), "e" * 50)]
    assert all(len(text) <= 120 for headings, text in passages[4:]) and len(passages) > 5


def test_a_folder_records_each_files_source_and_skips_hidden_files(tmp_path):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "install.md").write_text("# Install\n\nRun the installer.\n")
    (tmp_path / "docs" / "NEWS").write_text("* Release 2\n\nFaster.\n")
    (tmp_path / "docs" / ".hidden.md").write_text("# Secret\n\nNo.\n")
    passages = read_passages([tmp_path / "docs"])
    assert [(p.source, p.contextual()) for p in passages] == [
        ("NEWS", "Release 2: Faster."), ("guide/install.md", "Install: Run the installer.")]


def test_passages_read_back_from_jsonl_with_their_source_and_headings(tmp_path):
    passages = [Passage('Café "Dark Sky"', "a.md", ("Title", "Part")), Passage("a\\b")]
    path = tmp_path / "passages.jsonl"
    path.write_text(passages_jsonl(passages))
    assert read_passages(path) == [Passage('Café "Dark Sky"', "a.md", ("Title", "Part")),
                                   Passage("a\\b", "passages.jsonl")]
    assert read_corpus(path) == ['Title › Part: Café "Dark Sky"', "a\\b"]


def test_a_latin_1_text_file_is_read_not_refused(tmp_path):
    (tmp_path / "NEWS").write_bytes("Version 3.6 - François Pinard, 2001\n\n* Recodage des fichiers.\n"
                                    "* Noms à accents gardés.\n".encode("latin-1"))
    assert [p.contextual() for p in read_passages(tmp_path / "NEWS")] == [
        "Version 3.6 - François Pinard, 2001: Recodage des fichiers. Noms à accents gardés."]


def test_bad_input_is_named(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"text": "a"}\n{"body": "b"}\n')
    with pytest.raises(KcardError, match="line 2: expected a JSON object"):
        read_corpus(path)
    (tmp_path / "empty.txt").write_text("\n \n")
    with pytest.raises(KcardError, match="holds no text"):
        read_corpus(tmp_path / "empty.txt")
    with pytest.raises(KcardError, match="corpus format 'xml'"):
        read_corpus(path, "xml")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(KcardError, match="broken.pdf"):
        read_corpus(tmp_path / "broken.pdf")
    (tmp_path / "notes.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(KcardError, match="cannot read the corpus .*notes.bin: .*NUL byte"):
        read_corpus(tmp_path / "notes.bin")



@pytest.mark.parametrize("compress", ["gzip", "bz2", "lzma"])
def test_a_compressed_file_reads_as_the_file_inside(tmp_path, compress):
    import importlib

    module = importlib.import_module(compress)
    suffix = {"gzip": ".gz", "bz2": ".bz2", "lzma": ".xz"}[compress]
    shipped = tmp_path / f"NEWS{suffix}"  # as Debian ships a package's NEWS
    shipped.write_bytes(module.compress((DATA / "mpfr-NEWS").read_bytes()))
    passages, plain = read_passages(shipped), read_passages(DATA / "mpfr-NEWS")
    assert [(p.text, p.headings) for p in passages] == [(p.text, p.headings) for p in plain]
    assert {p.source for p in passages} == {f"NEWS{suffix}"}
    assert format_of(shipped) == "text"


def test_a_broken_compressed_file_is_named(tmp_path):
    (tmp_path / "NEWS.gz").write_bytes(b"not gzip at all")
    with pytest.raises(KcardError, match=r"cannot decompress .*NEWS\.gz \(gzip\)"):
        read_passages(tmp_path / "NEWS.gz")


needs_groff = pytest.mark.skipif(not shutil.which("groff"), reason="groff renders man pages (apt install groff-base)")


@needs_groff
def test_a_man_pages_roff_source_reads_as_man_shows_it():
    assert format_of(DATA / "frob.1") == "man"
    passages = read_passages(DATA / "frob.1")
    assert [p.contextual() for p in passages if p.headings] == [
        "NAME: frob - turn knobs on a remote panel",
        "SYNOPSIS: frob [OPTION]... PANEL",
        "OPTIONS › -k, --knob=NAME: Turn the knob called NAME; the default knob is main.",
        "OPTIONS › -w, --wait=SECONDS: Wait this many seconds between turns (default 3).",
        "EXIT STATUS: frob exits with status 4 when the panel does not answer."]


@needs_groff
def test_a_folder_reads_compressed_documents_and_man_pages(tmp_path, caplog):
    import gzip

    (tmp_path / "frob.1.gz").write_bytes(gzip.compress((DATA / "frob.1").read_bytes()))
    (tmp_path / "NEWS.gz").write_bytes(gzip.compress(b"* Version 2.3 (2026-12-01)\n\n  Added --wait.\n"))
    (tmp_path / "README.md.gz").write_bytes(gzip.compress(b"# frob\n\n## Install\n\nRun make.\n"))
    (tmp_path / "logo.png.gz").write_bytes(gzip.compress(b"\x89PNG\r\n\x00"))  # not a document
    passages = read_passages(tmp_path)
    assert {p.source for p in passages} == {"frob.1.gz", "NEWS.gz", "README.md.gz"} and not caplog.text
    texts = [p.contextual() for p in passages]
    assert "Version 2.3 (2026-12-01): Added --wait." in texts  # the format told by the name inside
    assert "frob › Install: Run make." in texts and "OPTIONS › -w, --wait=SECONDS" in " ".join(texts)


@needs_groff
def test_a_man_page_that_links_to_another_reads_as_that_page(tmp_path):
    import gzip

    (tmp_path / "man1").mkdir()
    (tmp_path / "man1" / "frob.1.gz").write_bytes(gzip.compress((DATA / "frob.1").read_bytes()))
    (tmp_path / "man1" / "knob.1").write_text(".so man1/frob.1\n")  # as man-db ships an alias's page
    (tmp_path / "man1" / "turn.1.gz").write_bytes(gzip.compress(b".so man1/knob.1\n"))  # a link to a link
    assert format_of(tmp_path / "man1" / "turn.1.gz") == "man"
    whole = [p.contextual() for p in read_passages(DATA / "frob.1")]
    for alias in ("knob.1", "turn.1.gz"):
        assert [p.contextual() for p in read_passages(tmp_path / "man1" / alias)] == whole
    (tmp_path / "man1" / "gone.1").write_text(".so man1/missing.1\n")
    (tmp_path / "man1" / "loop.1").write_text(".so man1/loop.1\n")
    with pytest.raises(KcardError, match=r"gone\.1 is a link to the man page man1/missing\.1, which is not beside"):
        read_passages(tmp_path / "man1" / "gone.1")
    with pytest.raises(KcardError, match="more than 5 man page links in a row"):
        read_passages(tmp_path / "man1" / "loop.1")


def test_a_man_page_without_groff_says_what_to_install(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(KcardError, match=r"frob\.1 is a man page .*groff.*apt install groff-base"):
        read_passages(DATA / "frob.1")


@needs_groff
@pytest.mark.skipif(not Path("/usr/share/man/man1/grep.1.gz").exists(), reason="grep's man page is not installed")
def test_a_real_man_page_as_it_ships():
    found = [p.contextual() for p in read_passages("/usr/share/man/man1/grep.1.gz") if "byte offset" in p.text]
    assert any(text.startswith("OPTIONS › ") and "--byte-offset" in text for text in found), found


@needs_groff
@pytest.mark.skipif(not Path("/usr/share/man/man1/init.1.gz").exists(), reason="systemd's init(1) is not installed")
def test_a_real_man_page_link_as_it_ships():  # init.1.gz is ".so man1/systemd.1"
    assert [p.text for p in read_passages("/usr/share/man/man1/init.1.gz")] == \
        [p.text for p in read_passages("/usr/share/man/man1/systemd.1.gz")]


FROB_INFO = ("This is frob.info, produced by makeinfo from frob.texi.\n\nINFO-DIR-SECTION Tools\nSTART-INFO-DIR-ENTRY\n"
             "* frob: (frob).   Turn knobs.\nEND-INFO-DIR-ENTRY\n\n\x1f\n"
             "File: frob.info,  Node: Top,  Next: Knobs,  Up: (dir)\n\nfrob\n****\n\nThis manual documents frob 2.3.\n\n"
             "* Menu:\n\n* Knobs::     Turning knobs.\n* Index::     Index.\n\n\x1f\n"
             "File: frob.info,  Node: Knobs,  Next: Index,  Prev: Top,  Up: Top\n\n1 Knobs\n*******\n\n"
             "* Menu:\n\nLonger:\n* Waiting::    Between turns.\n\n"  # a menu before the node's text
             "The default knob is main; see *note Top:: for the version.\n\n1.1 Waiting\n===========\n\n"
             "frob waits 3 seconds between turns.\n\n\x1f\n"
             "File: frob.info,  Node: Index,  Prev: Knobs,  Up: Top\n\nIndex\n*****\n\n\x00\x08[index\x00\x08]\n"
             "* Menu:\n\n* knob:    Knobs.    (line 6)\n\n\x1f\nTag Table:\nNode: Top\x7f120\n\x1f\nEnd Tag Table\n")


def test_an_info_manual_reads_without_its_navigation(tmp_path):
    (tmp_path / "frob.info").write_bytes(FROB_INFO.encode())
    assert [p.contextual() for p in read_passages(tmp_path / "frob.info")] == [
        "frob: This manual documents frob 2.3.",
        "1 Knobs: The default knob is main; see Top for the version.",
        "1 Knobs › 1.1 Waiting: frob waits 3 seconds between turns."]


def test_an_info_manual_in_parts_reads_its_parts_beside_it(tmp_path):
    import gzip

    first, rest = FROB_INFO.split("\x1f\nFile: frob.info,  Node: Knobs")
    rest = "\x1f\nFile: frob.info,  Node: Knobs" + rest
    (tmp_path / "frob.info-1.gz").write_bytes(gzip.compress(first.encode()))
    (tmp_path / "frob.info-2").write_text(rest)
    main = tmp_path / "frob.info.gz"
    main.write_bytes(gzip.compress(b"This is frob.info.\n\n\x1f\nIndirect:\nfrob.info-1: 100\nfrob.info-2: 400\n"
                                   b"\x1f\nTag Table:\n(Indirect)\n\x1f\nEnd Tag Table\n"))
    assert len(read_passages(main)) == 3
    assert len(read_passages(tmp_path)) == 3  # the parts are read through the manual, not again
    (tmp_path / "frob.info-2").unlink()
    with pytest.raises(KcardError, match=r"frob\.info\.gz is a manual in parts, and its part frob\.info-2 is not"):
        read_passages(main)


@pytest.mark.skipif(not Path("/usr/share/info/sed.info.gz").exists(), reason="sed's Info manual is not installed")
def test_a_real_info_manual_as_it_ships():
    passages = read_passages("/usr/share/info/sed.info.gz")
    assert not [p.text for p in passages if "Node:" in p.text or "* Menu:" in p.text or "\x08" in p.text]
    assert any(p.headings[:2] == ("2 Running sed", "2.2 Command-Line Options") and "in-place" in p.contextual()
               for p in passages)

def test_describe_proposes_a_subject_and_a_description():
    news = read_passages(DATA / "mpfr-NEWS")
    subject, description = describe(news, "mpfr")
    assert subject == "mpfr"  # named after what the text documents
    assert description.startswith("mpfr (mpfr-NEWS): ") and "4.2.0" in description
    assert describe(news, "mynotes")[0] == ""  # no opening name, no title, a name the text lacks
    titled = [Passage("Reads .env files.", "README.md", ("python-dotenv",)),
              Passage("pip install python-dotenv", "README.md", ("python-dotenv", "Getting Started"))]
    assert describe(titled, "envcard") == ("python-dotenv", "python-dotenv (README.md): Getting Started")
    opening = [Passage("The Halvard Observatory is a fictional observatory.")]
    assert describe(opening, "halvard")[0] == "Halvard Observatory"


def test_a_folder_skips_what_is_not_a_document_and_says_so(tmp_path, caplog):
    (tmp_path / "notes.md").write_text("# Notes\n\nKept.\n")
    (tmp_path / "picture.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "script.py").write_text("print('not a document')\n")
    (tmp_path / "questions.jsonl").write_text('{"question": "no text field"}\n')
    assert [p.contextual() for p in read_passages(tmp_path)] == ["Notes: Kept."]
    assert '1 file left out: questions.jsonl (line 1: expected a JSON object with a "text" field)' in caplog.text
    with pytest.raises(KcardError, match="questions.jsonl, line 1"):
        read_passages(tmp_path / "questions.jsonl")  # named on its own, it is an error


@pytest.fixture(scope="module")
def mpfr_registry(tmp_path_factory):
    """The registry with a retrieval card built from MPFR's NEWS at kcard's defaults, as "mpfr"."""
    from kcard_core.cards import Card
    from kcard_core.plugins import get_registry
    from kcard_core.scaffold import render_card

    package = render_card("mpfr", corpus=str(DATA / "mpfr-NEWS"), output_dir=str(tmp_path_factory.mktemp("mpfr")),
                          no_input=True)
    registry = get_registry()
    registry.cards["mpfr"] = Card.from_manifest(package / "kcard_card_mpfr" / "card.toml")
    yield registry
    registry.cards.pop("mpfr")


@pytest.mark.slow
def test_a_card_from_a_real_news_file_answers_which_release(mpfr_registry):
    from kcard_core.chains import build_chain

    result = build_chain("bottom-up", cards=["mpfr"], registry=mpfr_registry).invoke(
        "In which MPFR release were the functions mpfr_cosu and mpfr_sinu added?")
    assert "4.2.0" in result["answer"]
    document = next(d for d in result["trace"].to_dict()["documents"] if d["card"] == "mpfr")
    assert document["sources"][0] == "mpfr-NEWS › Changes from versions 4.1.* to version 4.2.0:"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["llama-cpp", "transformers"])
def test_the_span_reader_answers_which_release_with_the_version_alone(mpfr_registry, backend):
    from kcard_core.chains import build_chain

    chain = build_chain("bottom-up", cards=["mpfr"], registry=mpfr_registry, reader="span", backend=backend)
    answers = [chain.invoke(question)["answer"] for question in (
        "Which GNU MPFR version was called the \"dinde aux marrons\" release?",
        "In which GNU MPFR version did the MPFR_RNDA rounding mode become available?")]
    assert answers == ["4.0.0", "3.0.0"]  # the plain reader copies the release's whole passage
