"""The released views: the redaction convention, surrogates, optional LM rewriting, the surrogate vault
and key, and the surrogate stage entry (``stage``).
"""
