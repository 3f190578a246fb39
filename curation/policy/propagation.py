"""Mention propagation, the masking step after selection: every other occurrence of a masked value in its
scope, then the name variants of every masked person. The pipeline's masking and ``curation eval`` both
call it, so eval's numbers are the pipeline's."""

from __future__ import annotations

import functools

from curation.core.spans import Span
from curation.policy.identities import IdentityReport, mask_name_variants
from curation.policy.masking import (
    propagate_duplicates,
)

IDENTITY_PASSES = 4


def propagate_mentions(
    texts: dict[str, str],
    selected: dict[str, list[Span]],
    scope_of: dict[str, str],
    *,
    scope: str,
    min_chars: int,
    name_variants: bool = True,
) -> tuple[dict[str, list[Span]], IdentityReport]:
    """The masking step after selection: every other occurrence of a masked value in its scope, then
    the variants of every masked person ("Dana Whitfield" -> "Ms Whitfield", "D. Whitfield").

    Variants are found wherever a copy of the name now is and propagated in turn (the leak gate checks
    every masked value batch-wide); a variant next to a masked word can merge into a longer name, so
    this repeats until nothing changes (two passes, most). ``curation eval`` applies the same step, so
    its numbers are the pipeline's."""
    propagate = functools.partial(propagate_duplicates, texts, scope_of=scope_of, scope=scope, min_chars=min_chars)
    masked = propagate(selected)
    identities = IdentityReport()
    if name_variants:
        identity_scope = scope_of if scope != "document" else {d: d for d in texts}
        for _ in range(IDENTITY_PASSES):
            masked, found = mask_name_variants(texts, masked, identity_scope)
            identities = identities.add(found)
            if not (found.variant_spans or found.relabeled_as_person):
                break
            masked = propagate(masked)
    return masked, identities
