"""Letter case carried over from an original to the text that replaces it."""

from __future__ import annotations


def _match_case(template: str, word: str) -> str:
    """Give ``word`` the letter case style of ``template`` (UPPER, lower, or as drawn)."""
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and all(c.islower() for c in letters):
        return word.lower()
    return word
