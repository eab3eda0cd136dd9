"""``python -m mathhammer``."""

from .cli import main

main()
