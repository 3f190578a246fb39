"""Foundations every stage shares: the span type, text normalisation, value matching, the DuckDB warehouse,
the run configuration and private local state. Nothing here imports a stage entry.
"""
