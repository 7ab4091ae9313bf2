"""`mcp_bdd._process_tree` on real processes: a tree is found the same way with and without the
kernel's children lists, a wait is woken with and without pidfds, and a subreaper's orphans are
killed and reaped, also where the keeper runs (`python -I -S`, the module loaded by its path)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_bdd import _process_tree as tree

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc and prctl: Linux")


@pytest.fixture
def family() -> Iterator[subprocess.Popen[str]]:
    """A shell (its own session) with two children, one with a child of its own; all three run
    once it has printed a line (the pid of the youngest)."""
    script = "sleep 600 & sh -c 'sleep 600 & echo $!; wait' & wait"
    shell = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert shell.stdout is not None
    shell.stdout.readline()
    yield shell
    tree.kill_sessions({shell.pid})
    shell.wait(timeout=30)


def test_a_tree_is_found_alike_with_and_without_the_kernels_children_lists(
    family: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    found = set(tree.descendant_pids(family.pid))
    assert len(found) == 3 and tree.parent_of(family.pid) == os.getpid()
    assert {p.pid for p in tree.descendants(family.pid)} == found
    assert set(tree.session_members({family.pid})) == found | {family.pid}
    kernel = {pid: sorted(tree.children(pid)) for pid in found | {family.pid}}
    real_exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda path: not path.endswith("/children") and real_exists(path))
    assert {pid: sorted(tree.children(pid)) for pid in kernel} == kernel  # every process's parent, read
    assert tree.descendant_pids(2**22 + 1) == []  # no such process


@pytest.mark.parametrize("pidfds", [True, False])
def test_a_wait_ends_when_they_exit_zombies_included(pidfds: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not pidfds:
        monkeypatch.delattr(os, "pidfd_open")  # as on macOS and kernels before 5.3: polled
    quick = subprocess.Popen(["true"])
    slow = subprocess.Popen(["sleep", "600"])
    try:
        assert tree.wait_exit(quick.pid, 30)  # a zombie: not reaped yet
        assert tree.wait_exits([quick.pid, slow.pid], 0.2) == [slow.pid]
        assert not tree.wait_exit(slow.pid, 0)
        assert tree.kill_pids([slow.pid]) == {slow.pid}
        assert tree.wait_exit(slow.pid, 30)
    finally:
        slow.kill()
        for process in (quick, slow):
            process.wait(timeout=30)


#: a subreaper whose child leaves two orphans: both are killed and reaped, a child kept is not
_SUBREAPER = """
import os, subprocess, sys
from importlib.util import module_from_spec, spec_from_file_location
spec = spec_from_file_location("_process_tree", sys.argv[1])
tree = module_from_spec(spec)
spec.loader.exec_module(tree)
assert "typing" not in sys.modules, "the keeper would pay for it at every start"
tree.adopt_orphans()
kept = subprocess.Popen(["sleep", "600"])
subprocess.run(["sh", "-c", "sleep 600 & sh -c 'sleep 600 & sleep 600' & exit 0"], check=True)
orphans = set(tree.children(os.getpid())) - {kept.pid}
tree.kill_orphans({kept.pid}, timeout=30)
assert tree.children(os.getpid()) == [kept.pid], tree.children(os.getpid())
assert not any(os.path.exists(f"/proc/{pid}") for pid in orphans), orphans  # reaped, not zombies
assert "psutil" not in sys.modules, "the keeper, under -S, cannot import it"
kept.kill()
print(len(orphans))
"""


def test_a_subreaper_kills_and_reaps_its_orphans_but_those_it_keeps(tmp_path: Path) -> None:
    path = Path(tree.__file__)
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", textwrap.dedent(_SUBREAPER), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2"], run.stdout  # the first sleep and the inner sh; its own sleeps came up later
