"""The ``extract-trt`` command line (entry point :func:`main`).

Subcommands live in their own modules and are registered on :data:`app` here; keep them thin — the
work belongs in :mod:`extract_trt.runtime` (and, later, ``eval``/``export``), so that the library API
can do everything the CLI does.
"""

import sys

import typer
from typer.core import TyperCommand, TyperGroup

from extract_trt.cli import bench as bench_cli
from extract_trt.cli import doctor as doctor_cli
from extract_trt.cli import eval as eval_cli
from extract_trt.cli import run_job
from extract_trt.cli.export import export_app
from extract_trt.cli.extract import EPILOG, extract
from extract_trt.cli.train import train

app = typer.Typer(
    name="extract-trt",
    help="Extract the main content of web pages: raw HTML -> numbered blocks -> main/other labels -> "
    "main HTML -> Markdown or text.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.command("extract", no_args_is_help=True, epilog=EPILOG)(extract)
app.command("run-job", no_args_is_help=True, epilog=run_job.EPILOG)(run_job.run_job_command)
app.command("train")(train)
app.command("eval", no_args_is_help=True, epilog=eval_cli.EPILOG)(eval_cli.eval_command)
app.command("bench", epilog=bench_cli.EPILOG)(bench_cli.bench_command)
app.add_typer(export_app, name="export")
app.command("doctor", epilog=doctor_cli.EPILOG)(doctor_cli.doctor_command)


@app.command("version")
def version() -> None:
    """Print the extract-trt version."""
    from extract_trt import __version__

    typer.echo(f"extract-trt {__version__}")


def plain_help(command: TyperCommand | TyperGroup) -> TyperCommand | TyperGroup:
    """``command`` (and its subcommands) with plain-text help: Rich draws help in boxes sized to a terminal
    and, piped or redirected, cuts words at 80 columns; plain help is complete at any width. Epilog
    paragraphs (the examples) keep their line breaks (click's ``\\b`` marker)."""
    for cmd in [command, *getattr(command, "commands", {}).values()]:
        if cmd is not command:
            plain_help(cmd)
            if cmd.help and not cmd.short_help:  # click cuts the default summary at 45 characters
                cmd.short_help = cmd.help.split("\n\n")[0]
        cmd.rich_markup_mode = None  # type: ignore[attr-defined]  # typer's switch to click's formatter
        if cmd.epilog and not cmd.epilog.startswith("\b"):
            cmd.epilog = "\n\n".join("\b\n" + part for part in cmd.epilog.split("\n\n"))
    return command


def main() -> None:
    """Console-script entry point (``extract-trt``); help is plain text when stdout is not a terminal."""
    if sys.stdout.isatty():
        app()
    else:
        plain_help(typer.main.get_command(app))()


__all__ = ["app", "main"]
