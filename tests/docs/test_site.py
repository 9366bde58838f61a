"""The documentation site (mkdocs.yml, docs/): it builds strictly, its search finds what users
look up, its reference holds every command and option, and every example is run by a test."""

from __future__ import annotations

import html
import importlib
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from conftest import DOCS, SNIPPET, documentation
from docs_site import REPOSITORY, built_site

import rubriclib
from rubriclib.cli import main

ROOT = DOCS.parent
TESTS = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once as `make docs` builds it (strict), into a temporary folder."""
    return built_site(tmp_path_factory.mktemp("site"), {})


def search_text(site: Path) -> str:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    return "\n".join(f"{doc['title']}\n{doc['text']}" for doc in index["docs"])


@pytest.mark.parametrize(
    "term",
    ["rubric_vars", "set_waza_grade_pass", "--frozen", "checklist", "RUBRICLIB_PATH", "Ctrl-C"],
)
def test_search_finds_what_users_look_up(site: Path, term: str) -> None:
    assert term in search_text(site)


@pytest.mark.parametrize(
    ("page", "word"),
    [
        ("getting-started/", "vLLM"),
        ("writing-a-rubric/", "label"),
        ("versions/", "--frozen"),
        ("writing-a-rubric/", "--checklist-answers"),
        ("measuring/", "Ctrl-C"),
        ("agent-runs/", "OpenTelemetry"),
    ],
)
def test_search_splits_words_from_the_punctuation_beside_them(
    site: Path, page: str, word: str
) -> None:
    """The search box tokenises the index by its separator: a word written beside punctuation
    ("(vLLM,", "details.label") is a token of its own, so searching it finds it; a flag keeps
    its dashes ("--frozen", not "frozen"), a hyphenated word its hyphen ("Ctrl-C", not "c"),
    and a mixed-case name is one word ("OpenTelemetry", not "open" and "telemetry")."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    texts = [doc["text"] for doc in index["docs"] if doc["location"].startswith(page)]
    tokens = {token for text in texts for token in separator.split(re.sub(r"<[^>]+>", " ", text))}
    assert word in tokens


def test_the_search_box_reads_a_query_as_the_index_is_split(site: Path) -> None:
    """Material's search worker carries docs/hooks/search_query.js after its own code, so a
    leading "-" is part of a flag, not lunr's "must not contain" (the search box itself is
    driven in tests/browser/test_docs_search_in_browser.py)."""
    workers = list((site / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    assert len(workers) == 1
    patch = (DOCS / "hooks" / "search_query.js").read_text(encoding="utf-8")
    assert "lunr.QueryLexer.lexText" in patch
    assert workers[0].read_text(encoding="utf-8").endswith(patch)


def commands(group: click.Group, prefix: str = "rubriclib") -> Iterator[tuple[str, click.Command]]:
    context = click.Context(group)
    for name in group.list_commands(context):  # loads each command's module
        command = group.get_command(context, name)
        assert command is not None
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from commands(command, f"{prefix} {name}")


def test_the_cli_reference_has_every_command_and_option(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    listed = list(commands(main))
    assert len(listed) > 20
    for path, command in listed:
        assert f">{path}<" in page, path
        for parameter in command.params:
            if isinstance(parameter, click.Option) and not parameter.hidden:
                assert parameter.opts[0] in page, f"{path} {parameter.opts[0]}"


def test_the_cli_reference_shows_real_defaults_and_examples_as_code(site: Path) -> None:
    """No option shows click's unset sentinel as its default, a real default is shown, and
    every command's examples are a code block, one command a line, as `--help` prints them."""
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "Sentinel" not in page and "UNSET" not in page
    assert "<td><code>--trials</code></td>" in page and "<td><code>1</code></td>" in page
    code = "\n".join(re.findall(r"<pre><span></span><code>(.*?)</code></pre>", page, re.S))
    opens = re.compile(r"^Examples?\b.*:$", re.M)
    helps = {path: inspect.cleandoc(command.help or "") for path, command in commands(main)}
    with_examples = [(path, text) for path, text in helps.items() if opens.search(text)]
    assert len(with_examples) >= 9
    for path, text in with_examples:
        examples = text[opens.search(text).end() :].strip().splitlines()  # type: ignore[union-attr]
        for example in (line.strip() for line in examples if line.strip()):
            assert html.escape(example, quote=False) in code, f"{path}: {example}"


COMMAND_HEADING = re.compile(r'<h\d id="[^"]+">(rubriclib[^<]*)<')
OPTION_ROW = re.compile(
    r"<tr>\s*<td>(<code>.*?)</td>\s*<td>(.*?)</td>\s*<td>.*?</td>\s*<td>(.*?)</td>\s*</tr>", re.S
)


def reference_rows(page: str) -> dict[str, dict[str, tuple[str, str]]]:
    """Each command's options as the reference page shows them: an option's first name ->
    (its type cell, its default cell)."""
    parts = COMMAND_HEADING.split(page)
    return {
        path: {
            re.search(r"<code>(.*?)</code>", names)[1]: (kind, default)  # type: ignore[index]
            for names, kind, default in OPTION_ROW.findall(table)
        }
        for path, table in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_the_cli_reference_shows_each_option_s_range_and_default_as_click_has_them(
    site: Path,
) -> None:
    """Every option of every command: a range with the bounds `--help` prints (`x>0` refuses
    0, `x>=0` takes it), and the default click gives it when it is not typed (`none` when
    click has none, `required` when it must be typed)."""
    rows = reference_rows((site / "reference" / "cli" / "index.html").read_text(encoding="utf-8"))
    checked = 0
    for path, command in commands(main):
        context = click.Context(command, info_name=path)
        for option in command.params:
            if not isinstance(option, click.Option) or option.hidden:
                continue
            kind, default = rows[path][option.opts[0]]
            described = option.get_help_extra(context).get("range")
            if isinstance(option.type, click.IntRange | click.FloatRange):
                assert described and f"<code>{html.escape(described)}</code>" in kind, (
                    f"{path} {option.opts[0]}: {kind} is not {described}"
                )
            value = option.get_default(context, call=False)
            unset = value is None or value == () or repr(value) == "Sentinel.UNSET"
            shown = "required" if option.required else "none" if unset else f"<code>{value}</code>"
            assert default == shown, (
                f"{path} {option.opts[0]}: default {default}, click's {value!r}"
            )
            checked += 1
    assert checked > 100
    test_goldens = rows["rubriclib test-goldens"]
    assert "<code>x&gt;0</code>" in test_goldens["--requests-per-minute"][0]
    assert test_goldens["--checklist-answers"][1] == "<code>tool</code>"
    assert test_goldens["--no-cache"][1] == "<code>False</code>"


def api_section(page: str, name: str) -> str:
    """The part of the API page about `name`, up to the next object's heading."""
    start = page.index(f'id="{name}"')
    following = page.find('id="rubriclib.', start + 1)
    return page[start : following if following > 0 else len(page)]


DOCUMENTED = {
    "rubriclib.load_rubric": "rubriclib.rubrics.registry:load_rubric",
    "rubriclib.Judge": "rubriclib.judging.judge:Judge",
    "rubriclib.Judge.grade": "rubriclib.judging.judge:Judge.grade",
    "rubriclib.Judge.grade_many": "rubriclib.judging.judge:Judge.grade_many",
    "rubriclib.Panel": "rubriclib.judging.panel:Panel",
    "rubriclib.run_eval": "rubriclib.evals.python_api:run_eval",
    "rubriclib.test_goldens": "rubriclib.measure.runs:test_goldens",
    "rubriclib.calibrate": "rubriclib.measure.runs:calibrate",
    "rubriclib.align": "rubriclib.measure.runs:align",
    "rubriclib.read_traces": "rubriclib.item.transcript.opentelemetry:read_traces",
    "rubriclib.integrations.testing.assert_rubric": "rubriclib.integrations.testing:assert_rubric",
    "rubriclib.integrations.promptfoo.get_assert": "rubriclib.integrations.promptfoo:get_assert",
    "rubriclib.integrations.inspect.rubric_scorer": "rubriclib.integrations.inspect:rubric_scorer",
    "rubriclib.integrations.letta.rubric_grader": "rubriclib.integrations.letta:rubric_grader",
}
"""The public callables whose every parameter the API reference describes (from `Args:`)."""


@pytest.mark.parametrize(("shown", "home"), DOCUMENTED.items())
def test_the_api_reference_describes_every_parameter(site: Path, shown: str, home: str) -> None:
    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    module, _, path = home.partition(":")
    target: Any = importlib.import_module(module)
    for part in path.split("."):
        target = getattr(target, part)
    parameters = [name for name in inspect.signature(target).parameters if name != "self"]
    assert parameters
    section = api_section(page, shown)
    described = set(re.findall(r"<td>\s*<code>(\w+)</code>\s*</td>", section))
    assert set(parameters) <= described, f"{shown}: {set(parameters) - described}"


IMPORT = re.compile(r"^\s*from (rubriclib[\w.]*) import ([\w, ]+)$", re.M)


def test_the_documentation_imports_only_what_the_api_reference_documents() -> None:
    """Every `from rubriclib... import NAME` in README.md and the docs names something the
    Python API page documents, from where it documents it (the OpenTelemetry example imported
    `read_traces` from `rubriclib.item.transcript`, neither exported nor documented)."""
    reference = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: ([\w.]+)$", reference, re.M))
    imported = {
        f"{module}.{name.strip()}"
        for path in documentation()
        for module, names in IMPORT.findall(path.read_text(encoding="utf-8"))
        for name in names.split(",")
    }
    assert {"rubriclib.Judge", "rubriclib.read_traces"} <= imported
    assert imported - documented == set()


def test_the_api_reference_lists_exactly_the_public_api() -> None:
    """`rubriclib/__init__.py` is the one public API: the reference documents each of its names
    and nothing else but the integrations' entry points (everything else is internal)."""
    reference = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: ([\w.]+)$", reference, re.M))
    integrations = {name for name in documented if name.startswith("rubriclib.integrations.")}
    assert documented - integrations == {f"rubriclib.{name}" for name in rubriclib.__all__}
    assert set(rubriclib.__all__) <= set(dir(rubriclib))


INTERNAL_PATH = re.compile(r"\brubriclib\.(?!integrations\b)[a-z_]+\.[\w.]+")


def test_no_page_sends_a_reader_to_an_internal_module() -> None:
    """What the docs name in Python is public: `rubriclib.NAME`, or an integration's entry
    point; a path into a room (`rubriclib.item.TranscriptError`,
    `rubriclib.judging.engine.judge_stream`) is internal, so it may move in any release."""
    named = {
        (path.name, found)
        for path in documentation()
        if path.name != "changelog.md"
        for found in INTERNAL_PATH.findall(path.read_text(encoding="utf-8"))
    }
    assert named == set()


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        ("Item", ["output", "transcript", "input", "context", "reference", "baseline", "id"]),
        ("GradeResult", ["verdict", "passed", "score", "reason", "details"]),
    ],
)
def test_the_api_reference_describes_every_field(site: Path, model: str, fields: list[str]) -> None:
    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for field in fields:
        assert "<p>" in api_section(page, f"rubriclib.{model}.{field}"), f"{model}.{field}"


def test_every_page_is_in_the_nav_or_made_by_the_hook(site: Path) -> None:
    written = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    named = set(re.findall(r":\s+([\w/-]+\.md)$", config, re.M)) | set(
        re.findall(r"^\s+- ([\w/-]+\.md)$", config, re.M)
    )
    assert written == named - {"library/index.md"}


def snippets() -> list[tuple[Path, str]]:
    return [
        (path, match[1])
        for path in documentation()
        for match in SNIPPET.finditer(path.read_text(encoding="utf-8"))
    ]


def test_every_example_in_the_documentation_is_run_by_a_test() -> None:
    """A `<!-- snippet: NAME -->` that no test reads would be an example nobody checks."""
    found = snippets()
    assert len(found) >= 12
    tests = "\n".join(path.read_text(encoding="utf-8") for path in TESTS.rglob("test_*.py"))
    unread = [(path.name, name) for path, name in found if f'snippet("{name}")' not in tests]
    assert unread == []
    names = [name for _, name in found]
    assert len(names) == len(set(names)), "a snippet name is used twice"


def test_the_faq_sends_someone_coming_from_docent_to_from_docent(site: Path) -> None:
    """ "Coming from Docent" names `rubriclib new NAME --from-docent` and links the section that
    explains it first (it linked only the labels section)."""
    commands_page = (site / "command-line" / "index.html").read_text(encoding="utf-8")
    explained = re.search(r'<h\d id="([^"]+)">[^<]*<code>--from-docent', commands_page)
    assert explained, "no heading of the commands page names --from-docent"
    faq = (site / "faq" / "index.html").read_text(encoding="utf-8")
    section = faq.split('id="coming-from-docent"', 1)[1].split("<h2", 1)[0]
    links = re.findall(r'<a href="([^"]+)"', section)
    assert links and links[0] == f"../command-line/#{explained[1]}", links


def test_the_changelog_is_on_the_site_and_the_sitemap_has_addresses(site: Path) -> None:
    """The changelog page is CHANGELOG.md itself (included at build time), and with `site_url`
    set the sitemap lists every page's address (it was empty without one)."""
    page = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "Unreleased" in page and "--8&lt;--" not in page
    first = re.search(r"^- \*\*(.+?)\*\*", changelog, re.M)
    text = re.sub(r"<[^>]+>", "", page)  # the bullet's words, whatever markup they render in
    assert first and html.escape(first[1].replace("`", ""), quote=False) in text
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert "<loc>https://rubriclib.readthedocs.io/changelog/</loc>" in sitemap


ADDRESS = "https://github.com/example-owner/rubriclib"


def test_the_site_links_its_repository_and_each_page_s_source_only_when_given_its_address(
    site: Path, tmp_path: Path
) -> None:
    """No repository address is recorded, so `make docs` links none; built with one, the
    header links it and each page edits its source on main: a built-in's page its rubric file,
    the changelog page CHANGELOG.md, the generated library index nothing."""
    for page in ("index.html", "eval-files/index.html", "library/groundedness/index.html"):
        text = (site / page).read_text(encoding="utf-8")
        assert "/edit/" not in text and 'class="md-source"' not in text, page
    linked = built_site(tmp_path, {REPOSITORY: ADDRESS})

    def edit_links(page: str) -> list[str]:
        text = (linked / page / "index.html").read_text(encoding="utf-8")
        assert f'href="{ADDRESS}"' in text and 'class="md-source"' in text, page
        return re.findall(r'href="([^"]*/edit/[^"]*)"', text)

    assert edit_links("eval-files") == [f"{ADDRESS}/edit/main/docs/eval-files.md"]
    assert edit_links("library/groundedness") == [f"{ADDRESS}/edit/main/rubrics/groundedness.md"]
    assert edit_links("changelog") == [f"{ADDRESS}/edit/main/CHANGELOG.md"]
    assert edit_links("library") == []
    for source in ("docs/eval-files.md", "rubrics/groundedness.md", "CHANGELOG.md"):
        assert (ROOT / source).is_file()


def test_names_in_a_table_s_first_column_do_not_wrap(site: Path) -> None:
    """Rubric names, checklist ids and options (`--model`) in a table's first column are kept
    on one line, not broken at their hyphens: every page links the stylesheet that says so."""
    css = (site / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r"td:first-child code[^{]*\{[^}]*white-space: nowrap", css)
    for page in ("library/index.html", "reference/cli/index.html", "eval-files/index.html"):
        assert "stylesheets/extra.css" in (site / page).read_text(encoding="utf-8"), page


ASSET = re.compile(r'<(?:link|script|img|source|iframe)\b[^>]*?\b(?:href|src)="([^"]*)"[^>]*>')
"""A tag that makes the browser load something: a stylesheet, font, icon, script or image."""
ELSEWHERE = re.compile(r"^(?:[a-z][\w+.-]*:)?//", re.I)
"""An address on another host (`https://...`, `//host/...`); `data:` and relative ones are not."""


def test_every_page_loads_only_the_site_s_own_files(site: Path) -> None:
    """No page asks another host for anything: Google Fonts (on every page before) failed
    offline and told Google who reads an internal mirror. The system's fonts, and every
    script, stylesheet, icon and image from the site; a canonical link is an address, not a
    load."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, path
        loaded = [tag[0] for tag in ASSET.finditer(text) if 'rel="canonical"' not in tag[0]]
        assert len(loaded) > 3, path
        elsewhere = [tag for tag in loaded if ELSEWHERE.match(ASSET.fullmatch(tag)[1])]  # type: ignore[index]
        assert elsewhere == [], path
    for style in site.rglob("*.css"):
        text = style.read_text(encoding="utf-8")
        assert not re.search(r"@import|url\(\s*['\"]?(?:[a-z]+:)?//", text, re.I), style


CODE_BLOCK = re.compile(r'<div class="highlight"><pre><span></span><code>(.*?)</code></pre>', re.S)


def copied(block: str) -> str:
    """What Material's copy button copies from a block's HTML under docs/stylesheets/extra.css:
    the text without the console lexer's prompts (.gp) and output (.go)."""
    kept = re.sub(r'<span class="g[po]">.*?</span>', "", block, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", kept)).strip()


def test_the_copy_button_copies_commands_only(site: Path) -> None:
    """Material copies a block's innerText while it carries [data-md-copying]; the stylesheet
    hides prompts and output then, so a console block copies as commands a shell can run."""
    style = (site / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(
        r"\[data-md-copying\] \.gp,\s*\[data-md-copying\] \.go \{\s*display: none", style
    )
    blocks = [
        (path.relative_to(site), block)
        for path in site.rglob("*.html")
        for block in CODE_BLOCK.findall(path.read_text(encoding="utf-8"))
        if 'class="gp"' in block
    ]
    assert len(blocks) > 30
    for path, block in blocks:
        text = copied(block)
        assert not re.search(r"^\$ ", text, re.M), (path, text)
    judged = [copied(block) for _, block in blocks if "groundedness" in copied(block)]
    assert judged, "no console block runs rubriclib judge groundedness"
    assert not any("PASS groundedness" in text for text in judged)
    output_only = [
        path
        for path in site.rglob("*.html")
        for block in CODE_BLOCK.findall(path.read_text(encoding="utf-8"))
        if 'class="go"' in block and 'class="gp"' not in block
    ]
    assert output_only == [], "a console block with no command copies nothing: give it $ prompts"


SIGNED = {
    "assert_rubric": "rubriclib.integrations.testing:assert_rubric",
    "rubric_scorer": "rubriclib.integrations.inspect:rubric_scorer",
    "get_assert": "rubriclib.integrations.promptfoo:get_assert",
    "rubric_grader": "rubriclib.integrations.letta:rubric_grader",
}
"""The integrations' entry points whose signatures the integrations page writes by hand."""


def test_every_signature_the_integrations_page_writes_is_the_code_s() -> None:
    """A written signature names every parameter in order with its default (`assert_rubric(rubric,
    output=None, *, ...)`), or is a call with the required ones alone (`rubric_scorer(rubric)`)."""
    text = " ".join((DOCS / "integrations.md").read_text(encoding="utf-8").split())
    written = re.findall(rf"`(?:[\w.]+\.)?({'|'.join(SIGNED)})\(([^`]*)\)`", text)
    assert {name for name, _ in written} >= {"assert_rubric", "rubric_scorer"}
    for name, arguments in written:
        module, _, attribute = SIGNED[name].partition(":")
        signature = inspect.signature(getattr(importlib.import_module(module), attribute))
        full = []
        for parameter in signature.parameters.values():
            if parameter.kind is parameter.KEYWORD_ONLY and "*" not in full:
                full.append("*")
            default = parameter.default
            full.append(
                parameter.name if default is parameter.empty else f"{parameter.name}={default!r}"
            )
        required = [p for p in full if "=" not in p and p != "*"]
        shown = [part.strip() for part in arguments.split(",") if part.strip()]
        assert shown in (full, required), (
            f"{name}({', '.join(shown)}) is not {name}({', '.join(full)})"
        )
