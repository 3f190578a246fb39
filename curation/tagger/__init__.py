"""The learned tagger over the reference model's hidden states: the model (``model``), its training and
stored predictions (``store``), and the tagger stage entry (``stage``).
"""
