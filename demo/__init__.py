"""Demo MCP servers exercised by mcp-bdd's own living specification (``features/``).

- ``demo.shop``   the order/inventory shop plus a user-account service (``create_server()``).
- ``demo.crash``  a server whose ``crash`` tool kills the process mid-call.
- ``demo.broken`` a "server" that fails at start-up (stderr message, exit code 3).
- ``demo.hang``   a stdio "server" that reads requests and never answers.
"""
