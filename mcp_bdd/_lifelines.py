"""The old name of `mcp_bdd._process_tree`, kept only while `cli/matrix.py` imports it by that
name; that import is the last one, and this file goes with it."""

from mcp_bdd._process_tree import descendants, die_with_parent, kill_all, signal_group

__all__ = ["descendants", "die_with_parent", "kill_all", "signal_group"]
