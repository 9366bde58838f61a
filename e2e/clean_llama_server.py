"""llama-cpp-python's server, with `chatml-function-calling` rendering the chat unescaped.

A harness tool for `make e2e` and `make judge-accuracy`, not part of rubriclib. Run it with the
e2e venv's python in place of `python -m llama_cpp.server`, with the same arguments:

    .e2e/venv/bin/python e2e/clean_llama_server.py --model M.gguf \
        --chat_format chatml-function-calling --port 8080

Why: in llama-cpp-python 0.3.36 the `chatml-function-calling` handler
(`llama_cpp/llama_chat_format.py`, `chatml_function_calling`, line 4216) builds its template with
`ImmutableSandboxedEnvironment(autoescape=jinja2.select_autoescape(["html", "xml"]), ...)
.from_string(...)`. For a template made from a string `select_autoescape` turns escaping on, so
every message reaches the model HTML-escaped (`a < b && "d"` as `a &lt; b &amp;&amp;
&#34;d&#34;`), with or without tools. A judge grading code or markup then reads text that is
not the candidate's. The handler looks `ImmutableSandboxedEnvironment` up in its module when
called, so replacing that name with a subclass that forces `autoescape=False` unescapes all
three of its cases; the module's other environments already leave autoescape off, so they are
unchanged.

`--keep-escaping` (taken here, not passed on) serves the handler as shipped, to show the
difference. `--serve-required` (taken here too) serves `tool_choice: "required"`, which the
handler refuses (it asserts `tool_choice == "auto"`, a 500): the request goes on as `auto` with
the grammar of its first choice narrowed from `functions | "message:"` to `functions`, so the
model calls one of the tools, as servers that take `required` make it. Without it an exploring
judge on this server falls back to `auto`, where a model that first chooses `message:` can never
call a tool in that reply (the follow-up grammar lets it write `functions.search_run:` only as
text); `make exploring-accuracy` serves it.

With `RUBRICLIB_PROMPT_LOG` naming a file, every prompt given to `Llama.create_completion` (the
text the model reads) is appended to it as a JSON line `{"prompt": ...}` (a prompt of token ids
as `{"prompt_tokens": [...]}`).
"""

from __future__ import annotations

import functools
import json
import os
import runpy
import sys
import threading
from typing import Any

KEEP_ESCAPING = "--keep-escaping"
SERVE_REQUIRED = "--serve-required"
FIRST_CHOICE = 'root   ::= functions | "message:"'
"""The first grammar of the handler's `auto` case (`llama_chat_format.py`, line 4354)."""
PROMPT_LOG = "RUBRICLIB_PROMPT_LOG"


SHIPPED_USER_TURN = "{% if message.role == 'user' %}"
TOOL_RESULT_TURN = (
    "{% if message.role == 'tool' %}"
    "<tool_response>\n{{ message.content }}\n</tool_response>"
    "<|im_end|>\n"
    "{% endif %}"
)
"""A tool result's turn, which the shipped `chatml-function-calling` template leaves empty (it
renders `<|im_start|>tool` and nothing else), so a judge exploring a run never saw what its
tools returned: rendered here as Qwen2.5's own template wraps tool responses."""


def render_unescaped() -> None:
    """Make `llama_chat_format`'s template environments render with autoescape off, and the
    function-calling template render tool results (`TOOL_RESULT_TURN`)."""
    from llama_cpp import llama_chat_format

    shipped = llama_chat_format.ImmutableSandboxedEnvironment

    class UnescapedEnvironment(shipped):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["autoescape"] = False
            super().__init__(*args, **kwargs)

        def from_string(self, source: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(source, str) and "functions.<function_name>" in source:
                source = source.replace(SHIPPED_USER_TURN, TOOL_RESULT_TURN + SHIPPED_USER_TURN, 1)
            return super().from_string(source, *args, **kwargs)

    llama_chat_format.ImmutableSandboxedEnvironment = UnescapedEnvironment


def serve_required() -> None:
    """Serve `tool_choice: "required"` as `auto` whose first choice must be a function."""
    import llama_cpp
    from llama_cpp import llama_grammar

    required = threading.local()
    shipped_chat = llama_cpp.Llama.create_chat_completion
    shipped_grammar = llama_grammar.LlamaGrammar.from_string.__func__  # type: ignore[attr-defined]

    @functools.wraps(shipped_chat)
    def create_chat_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        required.on = kwargs.get("tool_choice") == "required"
        if required.on:
            kwargs["tool_choice"] = "auto"
        try:
            return shipped_chat(self, *args, **kwargs)
        finally:
            required.on = False

    def from_string(cls: Any, grammar: str, *args: Any, **kwargs: Any) -> Any:
        if getattr(required, "on", False) and grammar.startswith(FIRST_CHOICE):
            grammar = "root   ::= functions" + grammar[len(FIRST_CHOICE) :]
        return shipped_grammar(cls, grammar, *args, **kwargs)

    llama_cpp.Llama.create_chat_completion = create_chat_completion
    llama_grammar.LlamaGrammar.from_string = classmethod(from_string)  # type: ignore[assignment]


def log_prompts(path: str) -> None:
    """Append every prompt `Llama.create_completion` is given to `path`, one JSON line each."""
    import llama_cpp

    shipped = llama_cpp.Llama.create_completion
    lock = threading.Lock()

    @functools.wraps(shipped)
    def create_completion(self: Any, prompt: Any, *args: Any, **kwargs: Any) -> Any:
        line = {"prompt": prompt} if isinstance(prompt, str) else {"prompt_tokens": list(prompt)}
        with lock, open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
        return shipped(self, prompt, *args, **kwargs)

    llama_cpp.Llama.create_completion = create_completion


def main() -> None:
    keep_escaping = KEEP_ESCAPING in sys.argv[1:]
    required = SERVE_REQUIRED in sys.argv[1:]
    sys.argv[1:] = [arg for arg in sys.argv[1:] if arg not in (KEEP_ESCAPING, SERVE_REQUIRED)]
    if not keep_escaping:
        render_unescaped()
    if required:
        serve_required()
    if os.environ.get(PROMPT_LOG):
        log_prompts(os.environ[PROMPT_LOG])
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
