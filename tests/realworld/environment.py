from mcp_bdd.environment import *  # noqa: F401,F403
