"""`kcard new card`: render the cookiecutter template at the top of the repository."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from kcard_core.artifacts import sha256_of
from kcard_core.cards import CardManifest
from kcard_core.errors import KcardError

TEMPLATE = Path(__file__).resolve().parent.parent / "cookiecutter-card"


def render_card(name: str, *, description: str | None = None, model: str | None = None, chat: bool = False,
                trained: str | None = None, output_dir: str = ".", no_input: bool = False) -> Path:
    """Render ``kcard-card-NAME`` into ``output_dir`` with the card's weights: ``model`` (a GGUF
    file) or ``trained`` (a folder ``kcard train`` wrote: its manifest and files replace the template's)."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise KcardError(f"card name {name!r}: use lower-case letters, digits, '-' or '_', starting with a letter")
    if not TEMPLATE.is_dir():
        raise KcardError(f"the card template is not at {TEMPLATE}: install kcard from its source tree (pip install -e .)")
    from cookiecutter.main import cookiecutter

    context = {"card_name": name, "chat": "true" if chat else "false"}
    if description:
        context["description"] = description
    if model:
        context.update(model_file=Path(model).name, model_sha256=sha256_of(Path(model)))
    folder = Path(cookiecutter(str(TEMPLATE), no_input=no_input, extra_context=context, output_dir=output_dir))
    module = next(p for p in folder.iterdir() if p.name.startswith("kcard_card_"))
    if model:
        shutil.copyfile(model, module / Path(model).name)
    if trained:
        adopt_trained(Path(trained), module, name, description)
    return folder


def adopt_trained(trained: Path, module: Path, name: str, description: str | None) -> None:
    """Copy a trained card's manifest (renamed) and its local files (a whole folder for peft/) into ``module``."""
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
    text = re.sub(r"^name = .*$", f"name = {json.dumps(name)}", text, count=1, flags=re.M)
    if description:
        text = re.sub(r"^description = .*$", f"description = {json.dumps(description)}", text, count=1, flags=re.M)
    (module / "card.toml").write_text(text)
