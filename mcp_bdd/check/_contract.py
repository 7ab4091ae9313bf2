"""The contract lock's differences as `mcp-bdd check` findings (`check --contract FILE`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_bdd.contract import UNIQUE, Surface, compare

if TYPE_CHECKING:
    from mcp_bdd.check._finding import Finding

__all__ = ["contract_findings"]


def contract_findings(contract: Surface, now: Surface, where: str) -> list[Finding]:
    """Each classified difference as a check finding (breaking: high; routing, annotations: medium; additive: low)."""
    from mcp_bdd.check._finding import Finding
    from mcp_bdd.check._registry import Severity

    level = {"breaking": Severity.HIGH, "routing": Severity.MEDIUM, "annotations": Severity.MEDIUM,
             "additive": Severity.LOW}  # fmt: skip
    return [
        Finding(
            check="contract.matches",
            group="contract",
            severity=level[change.category],
            title=f"{change.category}: {change.text}",
            target=f"{change.kind} {change.key}",
            details=f"against the contract {where}",
            tip=f"if this change is intended, record it: `mcp-bdd contract update {where} ...` (and tell the "
            "clients if it is breaking).",
        )
        for change in compare(contract, now).items
    ] + [
        Finding(
            check="contract.matches",
            group="contract",
            severity=Severity.MEDIUM,
            title=f"{said}: only the first one is compared with the contract",
            target=target,
            details=f"against the contract {where}",
            tip=UNIQUE[0].upper() + UNIQUE[1:] + ".",
        )
        for target, said in now.duplicated()
    ]
