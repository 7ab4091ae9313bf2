""".ci/run, the CI entry point: what it installs for the browser tests before `make test`.

The script runs for real (bash), in a copy of .ci/ whose `..` is a temp folder, with a PATH of
stand-ins only: `id` says root, `apt-get` and `make` write what they were asked into a log, and
`chromium` / `chromedriver` exist or not as each case needs. Nothing is installed or built.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LOGGING = '#!/bin/sh\necho "$(basename "$0") $*" >> "$CI_LOG"\n'


def _ci_run(tmp_path: Path, present: tuple[str, ...], uid: int = 0) -> list[str]:
    """Run .ci/run with only `present` of chromium / chromedriver on PATH; the commands it ran."""
    (tmp_path / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_ins = {"id": f"#!/bin/sh\necho {uid}\n", "apt-get": LOGGING, "make": LOGGING}
    stand_ins |= {name: "#!/bin/sh\nexit 0\n" for name in present}
    for name, text in stand_ins.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    for tool in ("dirname", "basename"):
        real = shutil.which(tool)
        assert real is not None
        (bin_dir / tool).symlink_to(real)
    log = tmp_path / "ci.log"
    env = {"PATH": str(bin_dir), "CI_LOG": str(log)}
    done = subprocess.run(
        ["/bin/bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize(
    ("present", "installed"),
    [
        ((), "chromium chromium-driver"),
        (("chromium",), "chromium-driver"),  # was: nothing, and 13 browser tests skipped silently
        (("chromedriver",), "chromium"),
    ],
)
def test_ci_installs_whichever_of_chromium_and_its_driver_is_missing(
    tmp_path: Path, present: tuple[str, ...], installed: str
) -> None:
    ran = _ci_run(tmp_path, present)
    assert ran == ["apt-get update -qq", f"apt-get install -y -qq {installed}", "make test"]


def test_ci_installs_nothing_when_both_are_there_or_it_is_not_root(tmp_path: Path) -> None:
    assert _ci_run(tmp_path / "both", ("chromium", "chromedriver")) == ["make test"]
    assert _ci_run(tmp_path / "user", (), uid=1000) == ["make test"]
