"""Labeled data: the one gold JSONL format and its converters (``sets``), label maps onto the convention
(``label_map``), and the labeling loop with Label Studio (``loop``).
"""
