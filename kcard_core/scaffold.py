"""`kcard new card`: render the cookiecutter template into a pip-installable card package.

A card is an LM card (``model``: a GGUF file; ``trained``: a folder `kcard train` wrote) or a
retrieval card (``corpus``: the user's files or folders, read by :mod:`kcard_core.documents` and
stored in the package as passages.jsonl, each passage with its source and heading path).
Rendering is atomic: the package appears whole or not at all.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path

from kcard_core.artifacts import sha256_of
from kcard_core.cards import CardManifest
from kcard_core.documents import describe, passages_jsonl, read_passages
from kcard_core.errors import KcardError
from kcard_core.text import one_line

HERE = Path(__file__).resolve().parent
# in a wheel the template is package data (kcard_core/card_template); in the source tree, cookiecutter-card/
TEMPLATE = next((path for path in (HERE / "card_template", HERE.parent / "cookiecutter-card")
                 if (path / "cookiecutter.json").is_file()), HERE / "card_template")


def render_card(name: str, *, description: str | None = None, model: str | None = None, chat: bool = False,
                trained: str | None = None, corpus: str | Path | list[str | Path] | None = None,
                corpus_format: str = "auto", subject: str | None = None, output_dir: str = ".",
                no_input: bool = False) -> Path:
    """Render ``kcard-card-NAME`` into ``output_dir`` and return its folder.

    A retrieval card (``corpus``: files or folders) whose ``description`` or ``subject`` is not given
    gets those :func:`kcard_core.documents.describe` proposes; ``subject`` also replaces a trained
    card's."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise KcardError(f"card name {name!r}: use lower-case letters, digits, '-' or '_', starting with a letter")
    if sum(bool(source) for source in (model, trained, corpus)) > 1:
        raise KcardError("give one of --model, --from and --corpus")
    if not TEMPLATE.is_dir():
        raise KcardError(f"the card template is not at {TEMPLATE}: reinstall kcard (pip install --force-reinstall kcard)")
    target = Path(output_dir) / f"kcard-card-{name.replace('_', '-')}"
    if target.exists():
        raise KcardError(f"{target} already exists: remove it or give another --output-dir")
    context = {"card_name": name, "chat": "true" if chat else "false"}
    if description:
        context["description"] = one_line(description)
    if model:
        context.update(model_file=Path(model).name, model_sha256=sha256_of(Path(model)))
    passages = None
    if corpus:
        read = read_passages(corpus, corpus_format)
        proposed_subject, proposed_description = describe(read, name)
        from kcard_core.retrieval import QuestionIndex

        passages = passages_jsonl(read).encode()
        index = QuestionIndex([passage.contextual() for passage in read]).to_bytes()
        context.update(type="retrieval", corpus_sha256=hashlib.sha256(passages).hexdigest(),
                       index_sha256=hashlib.sha256(index).hexdigest(),
                       subject=one_line(subject) if subject is not None else proposed_subject)
        context.setdefault("description", proposed_description)
    try:
        from cookiecutter.main import cookiecutter
    except ImportError:
        raise KcardError("kcard new card renders its template with cookiecutter: pip install 'kcard[new]'") from None

    Path(output_dir).mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".kcard-new-", dir=output_dir))
    try:
        folder = Path(cookiecutter(str(TEMPLATE), no_input=no_input, extra_context=context, output_dir=str(staging)))
        module = next(p for p in folder.iterdir() if p.name.startswith("kcard_card_"))
        if model:
            shutil.copyfile(model, module / Path(model).name)
        if trained:
            adopt_trained(Path(trained), module, name, context.get("description"), subject)
        if passages is not None:
            (module / "passages.jsonl").write_bytes(passages)
            (module / "passages.index.npz").write_bytes(index)
        CardManifest.from_file(module / "card.toml")  # what was written parses, or nothing is left behind
        folder.rename(target)
    except KcardError:
        raise
    except EOFError:
        print(flush=True)  # ends the line the template's prompt left open
        raise KcardError("input ended before the template's questions were answered: answer them, or give "
                         "--no-input to take their defaults") from None
    except Exception as error:  # cookiecutter's and TOML's errors, named for the user
        raise KcardError(f"could not render the card: {type(error).__name__}: {error}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def adopt_trained(trained: Path, module: Path, name: str, description: str | None, subject: str | None = None) -> None:
    """Copy a trained card's manifest (renamed; its description and subject replaced when given) and its
    local files (a whole folder for peft/) into ``module``."""
    manifest = CardManifest.from_file(trained / "card.toml")  # refuses a broken or tampered card early
    for artifact in manifest.artifacts.values():
        if artifact.distribution or artifact.build or Path(artifact.file).is_absolute():
            continue  # the base model: found where it is installed
        artifact.resolve()
        top = Path(artifact.file).parts[0]
        if (trained / top).is_dir():
            shutil.copytree(trained / top, module / top, dirs_exist_ok=True)
        else:
            shutil.copyfile(trained / top, module / top)
    text = (trained / "card.toml").read_text()
    values = {"name": name, "description": description, "subject": subject}
    for key, value in values.items():  # a JSON string is a TOML basic string; a function, so "\u" stays text
        if value is not None and (value or key == "subject"):
            line = f"{key} = {json.dumps(one_line(value))}"
            text, found = re.subn(rf"^{key} = .*$", lambda _: line, text, count=1, flags=re.M)
            if not found and key == "subject":
                text += f"\n[retrieval]\n{line}\n"
    (module / "card.toml").write_text(text)
