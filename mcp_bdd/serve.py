"""`python -m mcp_bdd.serve module:attr --transport stdio|streamable-http|sse [--port N]`

The launcher that lets one `app = "module:attr"` definition serve the whole transport matrix:
it imports the server object (or calls the factory, which reads its configuration from the
environment it was given) and runs it on the requested transport, on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_bdd.serve", description=__doc__)
    parser.add_argument("app", help='the server object or factory, "module:attr"')
    parser.add_argument("--transport", default="stdio", choices=["stdio", "streamable-http", "sse"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--zygote", type=int, metavar="FD", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.zygote is not None:
        from mcp_bdd.zygote import run_zygote

        return run_zygote(args.app, args.zygote)

    sys.path.insert(0, os.getcwd())
    from mcp_bdd.apps import load_app, serve_object

    return serve_object(load_app(args.app, os.getcwd()), args.transport, args.host, args.port, spec=args.app)


if __name__ == "__main__":
    raise SystemExit(main())
