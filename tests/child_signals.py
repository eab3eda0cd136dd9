"""Children that a test interrupts with SIGINT: they must get it as Ctrl-C, even when the test
run itself was started with SIGINT ignored (a background job: ``cmd &`` in a script), which every
child would otherwise inherit; then the child never stops, and a test reading its output
forever eats the machine's memory."""

from __future__ import annotations

import signal


def sigint_as_ctrl_c() -> None:
    """``preexec_fn`` of such a child: SIGINT back to its default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
