from mcp_bdd.steps import *  # noqa: F403
