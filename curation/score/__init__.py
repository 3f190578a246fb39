"""Reference scoring: the causal LM's per-token surprise and hidden states (``scorer``), windows over them,
sharded scoring, the Ray executor, and the scoring stage entry (``stage``).
"""
