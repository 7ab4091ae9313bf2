"""`python -m mcp_bdd.cli`: the `mcp-bdd` command."""

import sys

from mcp_bdd.cli import main

sys.exit(main())
