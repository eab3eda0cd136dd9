"""The click classes typer runs on: typer 0.28 carries its own copy of click
(``typer._click``), older typers use the installed ``click``. Parameter types and parser hooks
must subclass that copy, or typer treats them as plain callables."""

from __future__ import annotations

try:
    from typer._click.core import Context, Parameter
    from typer._click.types import ParamType
except ImportError:  # typer < 0.28
    from click import Context, Parameter, ParamType  # type: ignore[assignment]

__all__ = ["Context", "ParamType", "Parameter"]
