"""Evaluation: ``curation eval`` against a gold set (``gold``), the leakage report and the canary
memorization probe.
"""
