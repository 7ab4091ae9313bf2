"""Living documentation: a behave formatter -> a typed run model -> one self-contained HTML file.

    behave -f mcp_bdd.report:LivingDocFormatter -o reports/living-doc.html features/

Modules (each one concept): `model` (frozen records, JSON round trip), `evidence` (attachments
-> records: truncation, safe images, secret masking), `collector` (behave callbacks -> model),
`coverage` (surface coverage map), `glossary` (step vocabulary), `views` + `render` (runs ->
HTML), `junit`, `merge` (CLI), `formatter` (the behave entry points). Only `collector` and
`formatter` know behave; nothing here imports the step library or the MCP SDK.
"""

from __future__ import annotations

from mcp_bdd.report.formatter import (
    CucumberJsonFormatter,
    CucumberMessagesFormatter,
    JUnitFormatter,
    LivingDocFormatter,
    write_run_json,
)
from mcp_bdd.report.junit import junit_xml, write_junit
from mcp_bdd.report.model import Run, dump_run, load_run
from mcp_bdd.report.render import render_html, write_html

__all__ = [
    "CucumberJsonFormatter",
    "CucumberMessagesFormatter",
    "JUnitFormatter",
    "LivingDocFormatter",
    "Run",
    "dump_run",
    "junit_xml",
    "load_run",
    "render_html",
    "write_html",
    "write_junit",
    "write_run_json",
]
