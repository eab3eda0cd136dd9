"""The click classes typer runs on: typer 0.28 carries its own copy of click
(``typer._click``), older typers use the installed ``click``. Parameter types and parser hooks
must subclass that copy, or typer treats them as plain callables."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # type-checked against the typer the project pins (its own copy of click)
    from typer._click.core import Context, Parameter
    from typer._click.shell_completion import CompletionItem
    from typer._click.types import ParamType
else:
    try:
        from typer._click.core import Context, Parameter
        from typer._click.shell_completion import CompletionItem
        from typer._click.types import ParamType
    except ImportError:  # typer < 0.28
        from click import Context, Parameter, ParamType
        from click.shell_completion import CompletionItem

__all__ = ["CompletionItem", "Context", "ParamType", "Parameter"]
