"""The package's version, in a module of its own: the reports and outputs that name it import
nothing else of mcp-bdd with it (the package's root offers `fake` and `matcher`, which reach the fakes).
tests/test_packaging.py checks it against pyproject.toml."""

__version__ = "0.1.0"
