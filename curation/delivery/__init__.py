"""Delivering a release: the dataset card, the atomic release writer, freshness fingerprints, and the
release stage entry (``stage``).
"""
