"""A stdio "server" that reads every request and never answers.

Used to check that a hung server fails the request (or the connect) at the configured timeout
and is still cleaned up. After stdin closes it keeps hanging, like a real deadlocked server,
so only killing the process ends it.
"""

import sys
import time


def main() -> None:
    for _line in sys.stdin.buffer:
        pass  # read and ignore: never write a response
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
