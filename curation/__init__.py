"""curation: privacy-sanitized dataset releases (pure library; the Dagster layer lives beside it)."""

__version__ = "0.1.0"
