"""Fixtures of the report tests (helpers live in report_helpers.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from report_helpers import CHROMIUM, DRIVER, SampleRun, make_sample_run


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    """The sample project run once with both formatters (label "stdio")."""
    return make_sample_run(tmp_path_factory.mktemp("sample"))


def _chromium(*, scripts: bool) -> Iterator[Any]:
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="mcp-bdd-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
    ]
    for flag in [*flags, f"--user-data-dir={profile}", "--window-size=1440,1000"]:
        options.add_argument(flag)
    if not scripts:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from _chromium(scripts=True)


@pytest.fixture(scope="module")
def browser_without_scripts() -> Iterator[Any]:
    """Chromium with JavaScript off, as some readers (and mail previews) have it."""
    yield from _chromium(scripts=False)
