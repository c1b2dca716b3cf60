"""GGUF files carry Jinja chat templates, which are code: both local backends render them sandboxed."""

import jinja2.exceptions
import pytest

ESCAPE = "{{ ''.__class__.__mro__[1].__subclasses__() }}{% for m in messages %}{{ m.content }}{% endfor %}"
MESSAGES = [{"role": "user", "content": "hello"}]


def test_llama_cpp_renders_chat_templates_in_a_sandbox():
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    formatter = Jinja2ChatFormatter(template=ESCAPE, eos_token="</s>", bos_token="<s>")
    with pytest.raises(jinja2.exceptions.SecurityError):
        formatter(messages=MESSAGES)


@pytest.mark.slow
def test_transformers_renders_chat_templates_in_a_sandbox():
    from transformers import AutoTokenizer

    from kcard_core.models import resolve_model
    from kcard_transformers.backend import weights_folder

    tokenizer = AutoTokenizer.from_pretrained(weights_folder(resolve_model(None)[1]))
    with pytest.raises(jinja2.exceptions.SecurityError):
        tokenizer.apply_chat_template(MESSAGES, chat_template=ESCAPE, tokenize=False)
