from mcp_bdd.steps import *  # noqa: F401,F403
