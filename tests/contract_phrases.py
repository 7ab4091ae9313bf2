"""The public step vocabulary as test data: `tests/data/contract.feature`, one instance of every
phrase of the step contract (a copy kept in the repository, so a fresh clone tests it), and
`contract-pending.txt`, the phrases of it that no step defines yet."""

from __future__ import annotations

import re
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
CONTRACT = DATA / "contract.feature"
PENDING_FILE = DATA / "contract-pending.txt"

_STEP = re.compile(r"^\s*(Given|When|Then|And|But) (.*)$")


def pending() -> frozenset[str]:
    """The phrases (step text without keyword) the vocabulary does not define yet."""
    lines = PENDING_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def contract_steps(*, with_pending: bool = False) -> list[tuple[str, str]]:
    """[keyword, text] of every step line of the contract, And/But taking the keyword before them."""
    out: list[tuple[str, str]] = []
    keyword = "given"
    skip = set() if with_pending else pending()
    for line in CONTRACT.read_text(encoding="utf-8").splitlines():
        match = _STEP.match(line)
        if match:
            if match.group(1) not in ("And", "But"):
                keyword = match.group(1).lower()
            text = match.group(2).rstrip()
            if text not in skip:
                out.append((keyword, text))
    return out


def implemented_contract() -> str:
    """The contract feature without its pending phrases (and the table or doc string under each)."""
    skip, out = pending(), []
    dropping = in_doc = False
    for line in CONTRACT.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        match = None if in_doc else _STEP.match(line)
        if match:
            dropping = match.group(2).rstrip() in skip
        elif stripped.startswith('"""'):
            in_doc = not in_doc
        elif not in_doc and not stripped.startswith("|"):
            dropping = False  # a scenario, a comment, a blank line: nobody's argument
        if not dropping:
            out.append(line)
    return "\n".join(out) + "\n"
