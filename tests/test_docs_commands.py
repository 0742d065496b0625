"""The documentation's commands parse with the current CLI, and the pages keep their shape.

Every line of a fenced code block in README.md, BENCHMARKS.md and the guides in docs/ that runs
``extract-trt`` (also after a ``$ `` prompt, inside ``&&``/``|``/``;`` chains, with ``\\`` continuations and
trailing ``# comments``) is split with :mod:`shlex` and handed to the click command that typer builds
from :data:`extract_trt.cli.app`, through ``make_context`` — the parse step only: options, arguments and
their types are checked (an unknown option or a missing argument fails), nothing runs.

Not checked: docs/benchmarks-history.md (superseded figures keep the commands of their time, some of them
with options that have changed since) and docs/notes/ (drafts of other branches, folded in later).
"""

import importlib
import re
import shlex
from pathlib import Path
from types import ModuleType

import pytest
import typer

from extract_trt.cli import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NOT_CHECKED = {"benchmarks-history.md"}
#: The guides, each for one reader task; each opens with a sentence saying what it is for.
GUIDES = ("usage", "models", "gpu", "crawl-scale", "robustness", "internals", "evaluation", "benchmarks-history", "integrations")
README_MAX_BYTES = 12 * 1024
BENCHMARKS_MAX_BYTES = 25 * 1024
#: Fence tags of blocks whose lines are commands ("" = untagged: a command cannot hide by lacking a tag).
SHELL_TAGS = {"", "bash", "sh", "shell", "console"}
#: Shell operators that end one command of a line (a redirection's target is not an argument either).
OPERATORS = {"&&", "||", "|", ";", "&", ">", ">>", "<", "2>", "(", ")"}


def documented_pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "BENCHMARKS.md"] + sorted(
        p for p in DOCS.glob("*.md") if p.name not in NOT_CHECKED
    )


def fenced_lines(text: str) -> list[tuple[int, str]]:
    """(line number, logical line) of every shell or untagged fenced code block, ``\\`` continuations
    joined. Program output goes in blocks tagged ``text`` (and code in ``python`` …): not commands."""
    lines, fence, checked, pending, start = [], None, False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith(("```", "~~~")):
                fence = stripped[:3]
                checked = stripped[3:].strip() in SHELL_TAGS
            continue
        if stripped.startswith(fence):
            fence = None
            continue
        if not checked:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append((start, pending + stripped))
        pending = ""
    return lines


def extract_trt_commands(line: str) -> list[list[str]]:
    """The argument lists of every ``extract-trt`` command on one shell line (prompt, chains, comments)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    commands, current = [], None
    for token in tokens + [";"]:
        if token in OPERATORS or set(token) <= set(";&|<>()"):
            if current is not None:
                commands.append(current)
            current = None
        elif current is not None:
            current.append(token)
        elif token == "extract-trt":
            current = []
    return commands


def documented_commands() -> list[tuple[str, list[str]]]:
    found = []
    for page in documented_pages():
        for number, line in fenced_lines(page.read_text(encoding="utf-8")):
            text = line[2:] if line.startswith("$ ") else line
            if "extract-trt" not in text:
                continue
            for args in extract_trt_commands(text):
                found.append((f"{page.relative_to(ROOT)}:{number}", args))
    return found


CLI = typer.main.get_command(app)


def click_modules() -> tuple[ModuleType, ModuleType]:
    """``core`` and ``exceptions`` of the click the CLI is built on (recent typers ship their own copy)."""
    base = next(cls for cls in type(CLI).__mro__ if cls.__name__ == "Command" and cls.__module__.endswith(".core"))
    core = importlib.import_module(base.__module__)
    return core, importlib.import_module(base.__module__.rsplit(".", 1)[0] + ".exceptions")


CORE, ERRORS = click_modules()


def parse(args: list[str]) -> None:
    """Parse ``extract-trt ARGS`` as the CLI would, without running the command (click errors raise)."""
    command, args, name = CLI, list(args), "extract-trt"
    while hasattr(command, "commands"):  # a group: descend to the subcommand
        if not args or args[0] not in command.commands:
            raise ERRORS.UsageError(f"no such subcommand: {args[:1]}")
        name = args.pop(0)
        command = command.commands[name]
    try:
        command.make_context(name, args, resilient_parsing=False)
    except CORE.Exit as stop:  # --help prints and stops: a documented, valid command
        if stop.exit_code != 0:
            raise


COMMANDS = documented_commands()


def test_the_docs_document_commands() -> None:
    assert len(COMMANDS) >= 30, COMMANDS
    subcommands = {args[0] for _, args in COMMANDS if args}
    assert {"extract", "run-job", "train", "eval", "bench", "export"} <= subcommands


@pytest.mark.parametrize("where,args", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_parses(where: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # documented paths such as ../shared/data are relative to the repository
    parse(args)


def test_a_wrong_option_fails() -> None:
    parse(["extract", "page.html", "--format", "text"])
    with pytest.raises(ERRORS.NoSuchOption):
        parse(["extract", "page.html", "--no-such-option"])
    with pytest.raises(ERRORS.BadParameter):
        parse(["extract", "page.html", "--format", "pdf"])
    with pytest.raises(ERRORS.UsageError):
        parse(["no-such-command"])
    with pytest.raises(ERRORS.UsageError):
        parse(["export", "onnx"])  # missing arguments


def test_command_lines_are_found_in_every_shell_form() -> None:
    text = "\n".join([
        "```bash",
        "pip install . && extract-trt extract --sample -o out/ && ls out/",
        "$ extract-trt eval -d a.jsonl \\",
        "    -x default   # two extractors",
        "cat page.html | extract-trt extract - > page.md",
        "```",
        "```text",
        "extract-trt simplify   159.4 pages/s (program output)",
        "```",
        "extract-trt outside a fence is prose",
    ])
    found = [args for _, line in fenced_lines(text) for args in extract_trt_commands(line.removeprefix("$ "))]
    assert found == [["extract", "--sample", "-o", "out/"], ["eval", "-d", "a.jsonl", "-x", "default"], ["extract", "-"]]


def test_sizes() -> None:
    assert (ROOT / "README.md").stat().st_size <= README_MAX_BYTES
    assert (ROOT / "BENCHMARKS.md").stat().st_size <= BENCHMARKS_MAX_BYTES


@pytest.mark.parametrize("guide", GUIDES)
def test_guide_says_what_it_is_for(guide: str) -> None:
    path = DOCS / f"{guide}.md"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines[0].startswith("# "), f"{path.name}: starts with its title"
    assert lines[1].startswith("This guide is for "), f"{path.name}: the first sentence says what it is for"
    assert f"docs/{guide}.md" in (ROOT / "README.md").read_text(encoding="utf-8"), f"README links {guide}.md"


def test_relative_links_resolve() -> None:
    """Every relative Markdown link of README, BENCHMARKS and docs/ (the history too) names an existing file."""
    pages = [ROOT / "README.md", ROOT / "BENCHMARKS.md"] + sorted(DOCS.glob("*.md"))
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            if not (page.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
