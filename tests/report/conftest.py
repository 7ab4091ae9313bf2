"""Fixtures of the report tests (helpers live in report_helpers.py)."""

from __future__ import annotations

import pytest
from report_helpers import SampleRun, make_sample_run


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    """The sample project run once with both formatters (label "stdio")."""
    return make_sample_run(tmp_path_factory.mktemp("sample"))
