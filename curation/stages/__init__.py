"""The stages of a curation run as plain functions over the warehouse, one module per stage.

Each stage reads its inputs from DuckDB, writes its outputs back, and returns a small summary of
counts and rates (never private values) that the Dagster layer shows as metadata. The Dagster
assets in ``assets/`` are thin wrappers over these modules, one asset module per stage module;
``curation eval`` and the tests call them directly. A stage module imports only the modules below it:
the library (``curation.*``) and the stages that come before it in a run.
"""
