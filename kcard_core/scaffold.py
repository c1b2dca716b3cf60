"""`kcard new card`: render the cookiecutter template at the top of the repository."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from kcard_core.artifacts import sha256_of
from kcard_core.errors import KcardError

TEMPLATE = Path(__file__).resolve().parent.parent / "cookiecutter-card"


def render_card(name: str, *, description: str | None = None, model: str | None = None, chat: bool = False,
                output_dir: str = ".", no_input: bool = False) -> Path:
    """Render ``kcard-card-NAME`` into ``output_dir``, copying ``model`` (a GGUF file) into it."""
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
    if model:
        module = next(p for p in folder.iterdir() if p.name.startswith("kcard_card_"))
        shutil.copyfile(model, module / Path(model).name)
    return folder
