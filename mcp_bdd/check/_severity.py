"""How bad a finding is: the one scale `--fail-on`, the console grouping and SARIF levels share."""

from __future__ import annotations

import enum

from mcp_bdd.errors import UsageError

__all__ = ["Severity"]


class Severity(enum.IntEnum):
    """How bad a finding is; `--fail-on` compares against it. SARIF levels: error / warning / note / none.

    INFO is a fact worth knowing that is no defect (a server that asks for no token): below every
    `--fail-on` level a user would choose, and the steps never fail on it.
    """

    INFO = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def sarif_level(self) -> str:
        return {Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "note", Severity.INFO: "none"}[self]

    @classmethod
    def parse(cls, text: str, where: str = "--fail-on") -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise UsageError(f'{where}: "{text}" is not a severity (use high, medium, low or info).') from None
