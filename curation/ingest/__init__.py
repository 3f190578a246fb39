"""Ingestion: reading raw inputs (every input kind) into documents and a quarantine, the delivery inbox,
and the ingestion stage entry (``stage``).
"""
