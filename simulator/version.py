"""The package's version (the ground: imported by results, reports and the CLI)."""

__version__ = "0.1.0"
