"""What the two Cucumber outputs (Messages and JSON) share: statuses, evidence as files, lines.

Both are read by tools that know nothing of MCP, so each step's MCP exchanges travel as one
JSON attachment (`mcp-exchanges.json`: request and response side by side, in order), a server's
stderr as text, and images as images. Everything here was masked when the run model was built.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from mcp_bdd.report.model import Evidence, Exchange, Feature, Image, Rule, Scenario, ran

__all__ = ["EXCHANGES_FILE", "File", "evidence_files", "first_line", "hook_errors", "line_of", "pickle_status"]

EXCHANGES_FILE = "mcp-exchanges.json"

#: Cucumber Messages' TestStepResult.status for each of our statuses; Cucumber JSON uses the same
#: words in lower case. An error in step code is a failure to Cucumber (it has no "error");
#: an untested step (after a failure) is skipped, as Cucumber reports it.
_STATUS = {
    "passed": "PASSED",
    "failed": "FAILED",
    "error": "FAILED",
    "hook_error": "FAILED",
    "undefined": "UNDEFINED",
    "pending": "PENDING",
    "skipped": "SKIPPED",
    "untested": "SKIPPED",
}


def pickle_status(status: str) -> str:
    return _STATUS.get(status, "UNKNOWN")


def hook_errors(feature: Feature, rule: Rule | None, scenario: Scenario) -> tuple[str | None, str | None]:
    """(before, after): the hook error each of a scenario's Before and After hooks carries.

    A failing before hook skips the steps, so when they ran the errors came after them: the
    scenario's own (after_scenario) and its rule's or feature's (after_rule, after_feature), both
    said. Otherwise the feature's or rule's before hook, else the scenario's own, broke first.
    """
    outer = feature.error_message or (rule.error_message if rule else None)
    own = scenario.error_message
    if ran(scenario.steps):
        after = "\n".join(dict.fromkeys(e for e in (own, outer) if e))
        return None, after or None
    return outer or own, None


def line_of(location: str, default: int = 1) -> int:
    """The line of "path/to.feature:12" (1 when there is none: Cucumber's lines start at 1)."""
    _, _, line = location.rpartition(":")
    return int(line) if line.isdigit() and int(line) > 0 else default


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


@dataclass(frozen=True, kw_only=True)
class File:
    """One attachment: `body` is text when `encoding` is IDENTITY, else base64."""

    media_type: str
    encoding: Literal["IDENTITY", "BASE64"]
    body: str
    name: str | None = None

    def base64(self) -> str:
        """The body base64-encoded (Cucumber JSON embeds everything that way)."""
        if self.encoding == "BASE64":
            return self.body
        return base64.b64encode(self.body.encode("utf-8")).decode("ascii")


def _exchange(exchange: Exchange) -> dict[str, object]:
    item: dict[str, object] = {
        "seq": exchange.seq,
        "kind": exchange.kind,
        "server": exchange.server,
        "method": exchange.method,
    }
    if exchange.duration_ms is not None:
        item["duration_ms"] = round(exchange.duration_ms, 3)
    if exchange.related is not None:
        item["related"] = exchange.related
    if exchange.is_error:
        item["is_error"] = True
    if exchange.truncated:
        item["preview"] = exchange.preview
        item["size"] = exchange.size
    else:
        item["payload"] = exchange.payload
    return item


def _image(image: Image, name: str) -> File:
    return File(media_type=image.mime, encoding="BASE64", body=image.data, name=name)


def evidence_files(evidence: Evidence) -> Iterator[File]:
    """The files a step (or a hook) attaches: its MCP exchanges, stderr tails, images, other files."""
    if evidence.exchanges:
        body = json.dumps([_exchange(e) for e in evidence.exchanges], ensure_ascii=False, indent=2)
        yield File(media_type="application/json", encoding="IDENTITY", body=body, name=EXCHANGES_FILE)
        for exchange in evidence.exchanges:
            for n, image in enumerate(exchange.images, 1):
                yield _image(image, f"image {n} of {exchange.method} (message {exchange.seq})")
    for tail in evidence.stderr:
        yield File(media_type="text/plain", encoding="IDENTITY", body=tail.text, name=f"stderr of {tail.server}")
    for attachment in evidence.attachments:
        if attachment.image is not None:
            yield _image(attachment.image, "image")
        elif attachment.text is not None:
            yield File(media_type=attachment.mime, encoding="IDENTITY", body=attachment.text)
