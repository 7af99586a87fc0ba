"""The ``tierank`` application object: the root command, ``--version``, the help text, and the command
group class every group of the command line uses.

Every command module registers on `app`; `tierank.cli` imports them in the order of
``tierank --help``.  This module imports typer only: ``tierank --version`` and ``tierank --help`` need no
more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup, TyperOption

if TYPE_CHECKING:
    from ..errors import TierankInputError


def _fail(err: TierankInputError) -> None:
    """One ``tierank: error: ...`` line per problem of ``err`` on stderr, then exit code 2."""
    from rich.console import Console

    console = Console(emoji=False, markup=False, stderr=True, highlight=False, soft_wrap=True)
    for p in err.problems:
        console.print(f"tierank: error: {p}", markup=False)
    raise typer.Exit(2)


def reflow(text: str) -> str:
    r"""A help text with each paragraph on one line (a docstring's single line breaks would otherwise
    break sentences in the middle at any terminal width); ``\f`` and what follows it dropped, ``\b``
    paragraphs kept as written.

    >>> reflow("Evaluate RUN against\n    QRELS.\n\n    More\n    text.")
    'Evaluate RUN against QRELS.\n\nMore text.'
    """
    import inspect

    paragraphs = inspect.cleandoc(text).partition("\f")[0].split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _untyped_flags(params: list) -> list:
    """Flags take no value: show no ``<bool>`` type next to them in the help."""
    for p in params:
        if isinstance(p, TyperOption) and (p.is_flag or p.count) and p.metavar is None:
            p.metavar = ""
    return params


def _given(param, argv: list[str]) -> list[str]:
    """The values given to the option ``param`` on the command line ``argv`` (as written)."""
    opts = [
        o
        for o in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
        if o.startswith("-")
    ]
    out = []
    for i, a in enumerate(argv):
        if a == "--":
            break
        for o in opts:
            if a == o and i + 1 < len(argv):
                out.append(argv[i + 1])
            elif o.startswith("--") and a.startswith(o + "="):
                out.append(a[len(o) + 1 :])
            elif (
                not o.startswith("--")
                and a.startswith(o)
                and len(a) > len(o)
                and not a.startswith("--")
            ):
                out.append(a[len(o) :].removeprefix("="))
    return out


def _kind(e: BaseException) -> str:
    """The name of click's exception class (typer bundles click: its classes are public by name only)."""
    return type(e).__name__


def usage_line(e: typer.TyperException, argv: list[str] | None = None) -> str:
    """click's refusal of a command line (an unknown option, a value out of range, a missing argument) as
    one line: the message, the value given where it is an option's, and where to read what is allowed.

    >>> usage_line(typer.BadParameter("must be at least 0"))
    'Invalid value: must be at least 0'
    """
    from ..errors import quote

    msg = " ".join(e.format_message().replace("Value error, ", "").split())
    param = getattr(e, "param", None)
    if isinstance(e, typer.BadParameter) and _kind(e) != "MissingParameter" and param is not None:
        given = _given(param, argv or [])
        if given:
            shown = ", ".join(quote(v, 40) for v in given[-3:])
            msg = (
                msg.replace(":", f" (given {shown}):", 1)
                if ":" in msg
                else f"{msg} (given {shown})"
            )
    ctx = getattr(e, "ctx", None)
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    if names and ctx is not None and ctx.command is not None:
        msg += f" (see: tierank {' '.join(reversed(names))} --help)"
    elif getattr(e, "ctx", None) is not None:
        msg += " (see: tierank --help)"
    return msg


class Group(TyperGroup):
    """The command group of ``tierank`` and its sub-groups (plot, report): help paragraphs reflowed,
    flags shown without a type.

    A command line click refuses (an unknown option or command, a value of the wrong type or out of range,
    a missing argument) is one ``tierank: error: ...`` line with exit code 2, as every other error is,
    instead of click's usage box."""

    def make_context(self, info_name, args, parent=None, **extra):
        argv = list(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except typer.TyperException as e:
            if _kind(e) == "NoArgsIsHelpError":  # no arguments: the help, as click prints it
                raise
            from ..errors import TierankInputError

            _fail(TierankInputError(usage_line(e, argv)))
        ctx.meta.setdefault("tierank.argv", argv)
        return ctx

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except typer.TyperException as e:
            if _kind(e) == "NoArgsIsHelpError":
                raise
            from ..errors import TierankInputError

            _fail(TierankInputError(usage_line(e, ctx.meta.get("tierank.argv"))))

    def get_params(self, ctx) -> list:
        return _untyped_flags(super().get_params(ctx))

    def get_command(self, ctx, cmd_name: str):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None and not isinstance(cmd, TyperGroup):
            _untyped_flags(cmd.get_params(ctx))
        if cmd is not None and cmd.help and not getattr(cmd, "_reflowed", False):
            cmd.help = reflow(cmd.help)
            cmd._reflowed = True  # type: ignore[attr-defined]  # our mark on click's Command: reflowed once
            if cmd.short_help is None:
                cmd.short_help = cmd.help.split("\n\n")[0]
        return cmd

    def format_commands(self, ctx, formatter) -> None:
        """The command list of the help: each command's summary wrapped at words only (click's own list
        also breaks at hyphens, ``askubuntu-`` / ``qrels``)."""
        import textwrap

        rows = [
            (name, cmd.get_short_help_str(formatter.width))
            for name in self.list_commands(ctx)
            if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden
        ]
        if not rows:
            return
        first = max(len(name) for name, _ in rows) + 2
        with formatter.section("Commands"):
            indent = " " * formatter.current_indent
            width = max(formatter.width - formatter.current_indent - first, 30)
            for name, text in rows:
                lines = textwrap.wrap(
                    text, width, break_on_hyphens=False, break_long_words=False
                ) or [""]
                formatter.write(f"{indent}{name:<{first}}{lines[0]}\n")
                for line in lines[1:]:
                    formatter.write(f"{indent}{'':<{first}}{line}\n")


#: the help is click's plain text (typer's rich help imports rich's markdown renderer and markdown_it:
#: most of the time of ``tierank --help``)
MARKUP = None


def root_typer(help: str | None) -> typer.Typer:
    """A Typer app with the root command's settings: `app`, and the stand-in of
    `tierank.cli.listing`."""
    return typer.Typer(
        cls=Group,
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=MARKUP,
        help=help,
    )


app = root_typer(
    "Tie-aware evaluation of retrieval runs: oblivious value, exact expectation, "
    "min, max, range, bias and std over all orderings of tied scores."
)


def _version(value: bool) -> None:
    if value:
        from ..version import (
            __version__,  # the one source of the version (pyproject.toml reads it too)
        )

        typer.echo(f"tierank {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass
