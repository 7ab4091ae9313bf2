"""Secret-shaped values (API keys, tokens, private keys): found in error texts, masked in findings.

A finding must never re-publish the secret it reports (SARIF files go to dashboards), so every
call a finding carries is passed through `mask_shapes` as well as the project's name-based masking.
"""

from __future__ import annotations

import re

from mcp_bdd.secrets import MASK

__all__ = ["SECRET_SHAPES", "find_shape", "mask_shapes"]


_SHAPES = [
    ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    ("an OpenAI/Anthropic-style API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b"),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    ("a private key", r"-----BEGIN (?:RSA |EC |OPENSSH |DSA |ENCRYPTED )?PRIVATE KEY-----[^-]*"),
    ("a bearer token", r"\bBearer\s+[A-Za-z0-9\-._~+/]{20,}=*"),
    ("a password in a connection string", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]{3,}@"),
    (
        "a secret assignment",
        r"(?i)\b[\w.-]*(?:password|passwd|secret|api[_-]?key|access[_-]?token)\s*[=:]\s*['\"]?[^\s'\",;]{6,}",
    ),
]
SECRET_SHAPES = [(label, re.compile(pattern)) for label, pattern in _SHAPES]


def find_shape(text: str) -> str | None:
    """What kind of secret `text` carries (the first found), or None."""
    for label, pattern in SECRET_SHAPES:
        if pattern.search(text):
            return label
    return None


def mask_shapes(text: str) -> str:
    for _, pattern in SECRET_SHAPES:
        text = pattern.sub(MASK, text)
    return text
