"""The built-in library's pages, made at build time from `rubrics/*.md` by rubriclib's own loader,
so the site can never disagree with what ships: a MkDocs hook (`hooks:` in mkdocs.yml).

`library/index.md` tables every built-in; `library/NAME.md` shows one: its identity, what it
requires, the body exactly as the judge is given it, its checklist items and every golden with
the verdict it must get and why. The pages are pure functions of the rubrics (`builtin_page`,
`library_index`), so tests call them without building the site.
"""

from __future__ import annotations

import re
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from rubriclib.judging.prompt.agent_run import run_blocks
from rubriclib.rubrics.golden import Golden
from rubriclib.rubrics.registry import builtin_dir, builtin_names, load_goldens, load_rubric
from rubriclib.rubrics.rubric import Rubric

LIBRARY = "library"
"""The site folder of the built-in pages; the nav entry `library/index.md` becomes their section."""
WHOLE_RUN = 10**9
"""A budget no golden's run reaches: a page shows every block whole."""


def builtins() -> list[tuple[Rubric, list[Golden]]]:
    """Every built-in, read from its file (never a project's rubric of the same name), with its
    goldens."""
    rubrics = [load_rubric(str(builtin_dir() / f"{name}.md")) for name in builtin_names()]
    return [(rubric, load_goldens(rubric)) for rubric in rubrics]


def fenced(text: str, language: str = "text") -> str:
    """`text` in a fence longer than any run of backticks inside it, so nothing ends it early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def scale_text(rubric: Rubric) -> str:
    """The scale as the library table says it: `1-5 (passes at 4)` for a scored rubric."""
    if rubric.scale == "1-5":
        return f"1-5 (passes at {rubric.pass_threshold})"
    return rubric.scale


def requires_text(rubric: Rubric) -> str:
    return ", ".join(f"`{field}`" for field in rubric.requires) or "nothing beyond the output"


def expected_text(golden: Golden) -> str:
    """The verdict a golden must get: the winner on a pairwise rubric, the score on a 1-5 one."""
    if golden.expected_winner is not None:
        return f"winner `{golden.expected_winner}`"
    if golden.expected_label is not None:
        return f"`{golden.expected_label}` ({golden.expected})"
    if golden.expected_score is not None:
        return f"`{golden.expected}` (score {golden.expected_score})"
    return f"`{golden.expected}`"


def golden_section(golden: Golden) -> str:
    """One golden: its verdict and why, then each value the judge is given, as given."""
    expected = f"**Expected:** {expected_text(golden)}"
    if golden.tags:
        expected += f" · **tags:** {', '.join(f'`{tag}`' for tag in golden.tags)}"
    lines = [f"### `{golden.name}`", "", expected, ""]
    if golden.why:
        lines += [f"**Why:** {golden.why}", ""]
    for field in ("input", "context", "reference", "baseline"):
        value = getattr(golden, field)
        if value is not None:
            lines += [f"{field}:", "", fenced(value), ""]
    if golden.transcript is not None:
        lines += [
            "transcript, as the judge is shown it:",
            "",
            fenced(run_blocks(golden.transcript, WHOLE_RUN)[0]),
            "",
        ]
    lines += ["output:", "", fenced(golden.output) if golden.output else "(empty)", ""]
    for quote in golden.cites:
        lines.append(f"- must cite: {quote!r}")
    return "\n".join(lines).rstrip() + "\n"


def builtin_page(rubric: Rubric, goldens: list[Golden]) -> str:
    """The page of one built-in, from its file alone."""
    facts = [
        f"# `{rubric.name}`",
        "",
        rubric.description,
        "",
        "| property | value |",
        "| --- | --- |",
        f"| version | `{rubric.version}` |",
        f"| scale | {scale_text(rubric)} |",
        f"| requires | {requires_text(rubric)} |",
        f"| citations | `{rubric.citations}` |",
        f"| goldens | {len(goldens)} |",
        "",
        f"Use it as `{rubric.name}`, or pinned: `{rubric.name}@^{rubric.version.split('.')[0]}`.",
        "",
        "## The body, as the judge is given it",
        "",
        fenced(rubric.body),
        "",
    ]
    if rubric.checklist:
        facts += [
            "## Checklist items",
            "",
            "Asked one by one under `--checklist`; an item answered `fail_if` is not satisfied.",
            "",
            "| id | question | fails if | requires | weight |",
            "| --- | --- | --- | --- | --- |",
        ]
        for item in rubric.checklist:
            question = item.question.replace("|", "\\|").replace("\n", " ")
            needs = ", ".join(f"`{field}`" for field in item.requires)
            weight = f"{item.effective_weight:g}"
            facts.append(f"| `{item.id}` | {question} | `{item.fail_if}` | {needs} | {weight} |")
        facts.append("")
    if rubric.examples:
        facts += [
            f"## Worked examples ({len(rubric.examples)})",
            "",
            "Shown to the judge before the candidate, with the verdict each got; never judged.",
            "",
            *(golden_section(example) for example in rubric.examples),
        ]
    facts += [f"## Goldens ({len(goldens)})", ""]
    facts += [golden_section(golden) for golden in goldens]
    return "\n".join(facts)


def library_index(library: list[tuple[Rubric, list[Golden]]]) -> str:
    """The table of every built-in, each linked to its page."""
    lines = [
        "# Built-in library",
        "",
        "Every rubric rubriclib ships, read from `rubrics/*.md` and `goldens/*.yaml` when the site",
        "is built: each page shows the body exactly as the judge is given it, the checklist items",
        "and every golden with its verdict and why. See [The built-in library](../builtins.md)",
        "for when to use which.",
        "",
        "| rubric | version | scale | requires | goldens | description |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rubric, goldens in library:
        description = rubric.description.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| [`{rubric.name}`]({rubric.name}.md) | `{rubric.version}` | {scale_text(rubric)} "
            f"| {requires_text(rubric)} | {len(goldens)} | {description} |"
        )
    return "\n".join(lines) + "\n"


def library_pages() -> dict[str, str]:
    """Each generated page by its path under docs/."""
    library = builtins()
    pages = {f"{LIBRARY}/index.md": library_index(library)}
    pages |= {f"{LIBRARY}/{rubric.name}.md": builtin_page(rubric, gs) for rubric, gs in library}
    return pages


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """The nav's `library/index.md` becomes a section: the index, then a page per built-in."""
    entry = f"{LIBRARY}/index.md"
    section = [entry, *({name: f"{LIBRARY}/{name}.md"} for name in builtin_names())]

    def expand(items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in items:
            if isinstance(item, dict):
                ((title, value),) = item.items()
                if value == entry:
                    out.append({title: section})
                elif isinstance(value, list):
                    out.append({title: expand(value)})
                else:
                    out.append(item)
            else:
                out.append(section if item == entry else item)
        return out

    if config.nav:
        config.nav = expand(config.nav)
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """The generated pages, added to the site's files as if they were in docs/."""
    for path, content in library_pages().items():
        files.append(File.generated(config, path, content=content))
    return files
