"""What behave captures of a step's print() output, with secrets masked as it is written.

Why: an in-process server (`app`) runs inside behave's process. What it prints is captured by
behave and shown with a failure (the console), kept in behave's JUnit and JSON: a server that
printed the token it was given leaked it there, though everything mcp-bdd prints is masked.
(Its logging is masked where records are made: `_logs`.)

How: behave makes a fresh capture buffer for every scenario from one name, `behave.capture.StringIO`.
Its masking twin masks each write as it is captured, so the offsets behave keeps to cut a
step's part out of the scenario's output stay right. A secret split over several writes (one
print() of several arguments writes each apart) is masked when one write holds it whole.
"""

from __future__ import annotations

import io

from mcp_bdd.secrets import mask

__all__ = ["mask_captured_output"]


class MaskingIO(io.StringIO):
    """A StringIO that masks what is written to it."""

    def write(self, text: str) -> int:
        super().write(mask(text))
        return len(text)  # what the caller wrote, as a stream reports it


def mask_captured_output() -> None:
    """From the next scenario on, behave's captured stdout and stderr are masked (idempotent)."""
    import behave.capture

    if behave.capture.StringIO is not MaskingIO:
        behave.capture.StringIO = MaskingIO
