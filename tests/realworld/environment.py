from mcp_bdd.environment import *  # noqa: F403
