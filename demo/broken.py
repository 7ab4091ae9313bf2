"""A server that cannot start: it prints why on stderr and exits with code 3 at once.

Used to check that a start-up failure is reported with the command, the exit code and the
last lines of the server's stderr, within ``startup_timeout``.
"""

import sys


def main() -> int:
    print("boom: database unreachable", file=sys.stderr, flush=True)
    return 3


if __name__ == "__main__":
    sys.exit(main())
