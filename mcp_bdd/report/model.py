"""The typed run model: what one behave run did, frozen, JSON round-trippable.

The formatter builds it while behave runs; the renderer, the JUnit writer and `merge` only ever
read it (so a report can be re-rendered or merged from `living-doc.json` without behave).
Everything in it that came from a server (payloads, names, descriptions) is untrusted text:
the model keeps it verbatim and the renderer escapes it.

Pure module: no behave, no mcp, no jinja2.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

__all__ = [
    "OUTCOMES",
    "SCHEMA",
    "STATUSES",
    "Attachment",
    "Background",
    "Evidence",
    "ExampleRef",
    "Examples",
    "Exchange",
    "Failure",
    "Feature",
    "Image",
    "Outcome",
    "Outline",
    "Rule",
    "Run",
    "Scenario",
    "ServerSurface",
    "Status",
    "StderrTail",
    "Step",
    "StepDef",
    "StepText",
    "Table",
    "combine",
    "dump_run",
    "load_run",
    "not_started",
    "outcome",
    "ran",
    "walk_scenarios",
]

#: Bumped when a reader of an older file would misread a newer one.
SCHEMA = "mcp-bdd.run/1"

#: Status of a step, scenario or container. Finer than behave's scenario status on purpose:
#: behave folds undefined and pending steps into "error"; a product owner wants them told apart.
Status = Literal["passed", "failed", "error", "undefined", "pending", "hook_error", "skipped", "untested"]
STATUSES: tuple[Status, ...] = (
    "passed",
    "failed",
    "error",
    "undefined",
    "pending",
    "hook_error",
    "skipped",
    "untested",
)

#: The summary buckets of the pass-rate chart.
Outcome = Literal["passed", "failed", "errored", "pending", "skipped", "untested"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "errored", "pending", "skipped", "untested")

_OUTCOME: dict[str, Outcome] = {
    "passed": "passed",
    "failed": "failed",
    "error": "errored",
    "undefined": "errored",
    "hook_error": "errored",
    "pending": "pending",
    "skipped": "skipped",
    "untested": "untested",
}

# Worst wins when a container sums up its children; "skipped" ranks lowest so that a feature
# with one passed and three skipped scenarios reads as passed.
_RANK: dict[str, int] = {
    "skipped": 0,
    "passed": 1,
    "untested": 2,
    "pending": 3,
    "failed": 4,
    "undefined": 5,
    "error": 6,
    "hook_error": 7,
}


def ran(steps: Iterable[Step]) -> bool:
    """Whether any of `steps` was executed (a hook that fails after this one is after_scenario)."""
    return any(s.status not in ("skipped", "untested") for s in steps)


def outcome(status: str) -> Outcome:
    """The summary bucket of a status (undefined, error and hook errors are all "errored")."""
    return _OUTCOME.get(status, "untested")


_KNOWN: dict[str, Status] = {s: s for s in STATUSES}


def combine(statuses: Iterable[str]) -> Status:
    """The status of a container from its children's: the worst one; nothing at all is skipped."""
    worst: Status = "skipped"
    for status in statuses:
        known = _KNOWN.get(status, "untested")
        if _RANK[known] > _RANK[worst]:
            worst = known
    return worst


@dataclass(frozen=True, kw_only=True)
class Table:
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, kw_only=True)
class Image:
    """A raster image a server sent (base64). Only PNG, JPEG, GIF and WebP are ever kept."""

    mime: str
    data: str
    size: int  # decoded bytes


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One MCP message as the report keeps it (see `mcp_bdd.transcript.Exchange`).

    `payload` is None when the message was cut: `preview` then holds its beginning and `size`
    the full size. `target` (tool name, resource URI, prompt name) and `is_error` are read
    before cutting, so coverage stays right for huge messages.
    """

    seq: int
    kind: str
    server: str
    method: str
    at: float
    duration_ms: float | None = None
    related: int | None = None
    payload: object = None  # the message's JSON as it was sent (masked): any JSON value
    preview: str | None = None
    size: int = 0
    images: tuple[Image, ...] = ()
    target: str | None = None
    is_error: bool = False

    @property
    def truncated(self) -> bool:
        return self.preview is not None


@dataclass(frozen=True, kw_only=True)
class StderrTail:
    server: str
    text: str


@dataclass(frozen=True, kw_only=True)
class Attachment:
    """Anything else attached with `context.attach` (a screenshot, a log)."""

    mime: str
    size: int
    text: str | None = None
    image: Image | None = None


@dataclass(frozen=True, kw_only=True)
class Evidence:
    exchanges: tuple[Exchange, ...] = ()
    stderr: tuple[StderrTail, ...] = ()
    attachments: tuple[Attachment, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.exchanges or self.stderr or self.attachments)


@dataclass(frozen=True, kw_only=True)
class StepText:
    """A step as written (Background and Scenario Outline templates)."""

    keyword: str
    name: str
    text: str | None = None
    table: Table | None = None


@dataclass(frozen=True, kw_only=True)
class Failure:
    """An expectation failure in its parts (from `mcp_bdd.errors.ExpectationFailed`), so the page
    can read it top-down: the sentence, Expected / Actual / path, the call, the tip.

    `differences` are the JSONPaths where a compared JSON value differs (the diff view marks them).
    """

    sentence: str
    title: str
    expected: object = None  # JSON values, as the failure compared them (masked)
    actual: object = None
    has_expected: bool = False
    has_actual: bool = False
    path: str | None = None
    details: str | None = None
    tip: str | None = None
    differences: tuple[str, ...] = ()
    call_seq: int | None = None  # the request the failure quotes as the call that produced the value


@dataclass(frozen=True, kw_only=True)
class Step:
    keyword: str
    name: str
    step_type: str
    location: str
    status: Status
    duration: float = 0.0
    text: str | None = None
    table: Table | None = None
    error_message: str | None = None
    error_kind: str | None = None  # failure category (mcp_bdd.failures.KINDS), from the exception's type
    failure: Failure | None = None  # the parts of an expectation failure (error_message has it as text)
    background: bool = False
    definition: str | None = None  # location of the step definition that matched
    evidence: Evidence = field(default_factory=Evidence)


@dataclass(frozen=True, kw_only=True)
class Background:
    keyword: str
    name: str
    location: str
    steps: tuple[StepText, ...]


@dataclass(frozen=True, kw_only=True)
class ExampleRef:
    """Where an outline-generated scenario comes from: Examples table n, row m (1-based)."""

    examples: int
    row: int


@dataclass(frozen=True, kw_only=True)
class Scenario:
    kind: Literal["scenario"] = "scenario"
    id: str
    name: str
    keyword: str
    location: str
    status: Status
    duration: float = 0.0
    description: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    error_message: str | None = None  # hook errors
    error_kind: str | None = None  # the hook error's category (mcp_bdd.failures.KINDS)
    evidence: Evidence = field(default_factory=Evidence)  # attached before the first step (hooks)
    example: ExampleRef | None = None
    after_evidence: Evidence = field(default_factory=Evidence)  # attached after the steps (hooks, teardown)
    skip_reason: str | None = None  # why it was skipped, when something said (mcp-bdd: it has no steps)


@dataclass(frozen=True, kw_only=True)
class Examples:
    keyword: str
    name: str
    location: str
    table: Table
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Outline:
    kind: Literal["outline"] = "outline"
    id: str
    name: str
    keyword: str
    location: str
    status: Status
    duration: float = 0.0
    description: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    steps: tuple[StepText, ...] = ()
    examples: tuple[Examples, ...] = ()
    scenarios: tuple[Scenario, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Rule:
    kind: Literal["rule"] = "rule"
    id: str
    name: str
    keyword: str
    location: str
    status: Status
    duration: float = 0.0
    description: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    background: Background | None = None
    children: tuple[Annotated[Scenario | Outline, Field(discriminator="kind")], ...] = ()
    error_message: str | None = None


Child = Annotated[Scenario | Outline | Rule, Field(discriminator="kind")]


@dataclass(frozen=True, kw_only=True)
class Feature:
    id: str
    name: str
    keyword: str
    filename: str
    location: str
    status: Status
    duration: float = 0.0
    description: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    background: Background | None = None
    children: tuple[Child, ...] = ()
    error_message: str | None = None  # before_feature / after_feature hook errors


@dataclass(frozen=True, kw_only=True)
class ServerSurface:
    """A server's identity and surface as seen during the run (secrets already masked)."""

    server: str
    name: str | None = None
    version: str | None = None
    protocol: str | None = None
    transport: str | None = None
    capabilities: dict[str, object] | None = None
    instructions: str | None = None
    tools: tuple[dict[str, object], ...] | None = None
    resources: tuple[dict[str, object], ...] | None = None
    resource_templates: tuple[dict[str, object], ...] | None = None
    prompts: tuple[dict[str, object], ...] | None = None
    extra: dict[str, object] = field(default_factory=dict)  # anything else sent (env, headers: masked)
    #: per kind ("tools", "resources", "resource_templates", "prompts"), how many records at the end
    #: of its tuple keep their name (or URI) only, and how many the server listed past those that
    #: are not kept at all: a server's catalog must not make the report as large as it is
    #: (report/evidence.py, `CATALOG_ITEMS`, `CATALOG_NAMES`)
    named_only: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class StepDef:
    """One entry of the step vocabulary (from behave's step registry)."""

    step_type: str
    pattern: str
    location: str
    doc: str = ""
    uses: int = 0


@dataclass(frozen=True, kw_only=True)
class Run:
    schema: str = SCHEMA
    label: str = "run"
    title: str = "Living documentation"
    started_at: float = 0.0
    duration: float = 0.0
    status: Status = "untested"
    features: tuple[Feature, ...] = ()
    servers: tuple[ServerSurface, ...] = ()
    glossary: tuple[StepDef, ...] = ()
    meta: dict[str, str] = field(default_factory=dict)  # behave version, python, host ...
    links: dict[str, str] = field(default_factory=dict)  # requirement-link templates (report/links.py)
    #: why the run did not start (its before_all setup failed), and that failure's category
    #: (mcp_bdd.failures.KINDS): told by mcp-bdd's hooks, since behave's model keeps no trace of it
    error_message: str | None = None
    error_kind: str | None = None


def not_started(run: Run, *, one_line: bool = False) -> str | None:
    """Why the run did not start (None when it did), as one text for the outputs that have no
    scenario to carry it: JUnit, Cucumber JSON and Messages, the step summary. Without it, a run
    whose before_all failed would be an empty file to the CI reading them: nothing failed.

    `one_line`: its lines joined, for the places a tool shows one line of (a JUnit `message`, an
    exception's message): the first line alone only introduces a list ("Features name servers
    that are not configured:"), and the server's name is in the next."""
    if run.error_message is None:
        return None
    said = run.error_message
    if one_line:
        said = " ".join(line.strip() for line in said.splitlines() if line.strip())
    return f"The run did not start ({run.error_kind or 'error'}): {said}"


def walk_scenarios(children: Iterable[Scenario | Outline | Rule]) -> Iterator[Scenario]:
    """Every executable scenario below `children` (outlines give their generated ones)."""
    for child in children:
        if isinstance(child, Rule):
            yield from walk_scenarios(child.children)
        elif isinstance(child, Outline):
            yield from child.scenarios
        else:
            yield child


_RUN = TypeAdapter(Run)


def dump_run(run: Run) -> dict[str, object]:
    """The run as plain JSON data (what `living-doc.json` holds)."""
    data: dict[str, object] = _RUN.dump_python(run, mode="json")
    return data


def load_run(data: object) -> Run:
    """Read a run back from JSON data; raises ValueError on a file that is not a run."""
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("mcp-bdd.run/"):
        raise ValueError("not an mcp-bdd run file (no 'schema': 'mcp-bdd.run/1')")
    data = {k: v for k, v in data.items() if k != "coverage"}  # derived, written for other readers
    return _RUN.validate_python(data)
