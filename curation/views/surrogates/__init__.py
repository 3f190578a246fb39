"""Deterministic, format-preserving surrogates for detected entities, driven by the convention.

Every replacement is chosen by HMAC-SHA256(key, scope | entity type | normalized value), so the
same original gets the same surrogate within a scope, unrelated ones across scopes, and entirely
new ones after a key rotation, without storing anything but keyed HMACs. Replacement values come
only from name lists or fictional and reserved ranges (Faker's person lists of several locales,
example.* domains, 555-01xx phones, 9xx SSNs, documentation IP ranges) or, for nationalities /
religious / political groups, from a built-in list of such groups, and never equal an original seen in the batch (see
:meth:`SurrogateEngine.register_originals` for exactly what is guaranteed).

Nothing here (reprs, exceptions, log lines) ever contains an original value.

Modules: ``model`` (scopes, results, errors), ``pools`` (the fictional name lists), ``names`` (parsing and
rebuilding person mentions), ``resolver`` (mentions and emails -> identities), ``formats`` (phones, ids, SSNs,
IBANs, IPs, masks), ``nrp`` (nationalities, religious and political groups), ``addresses``, ``dates``, and
``engine`` (the convention applied per label, and whole-text rewriting). This package re-exports their public
names; the modules import each other, never this package.
"""

from curation.views.surrogates.addresses import generalize_address
from curation.views.surrogates.dates import DAYS_PER_MONTH, shift_dates
from curation.views.surrogates.engine import (
    DATE_OFFSET_DRAWS,
    EXAMPLE_DOMAINS,
    MAX_DRAWS,
    STRICT_NAME_DRAWS,
    WORD_CHECKED_LABELS,
    SurrogateEngine,
)
from curation.views.surrogates.formats import (
    DOC_V4_NETS,
    MASK_CHAR,
    iban_surrogate,
    id_surrogate,
    ip_surrogate,
    mask_keep_last,
    phone_surrogate,
    ssn_surrogate,
)
from curation.views.surrogates.model import (
    NoFreshSurrogate,
    Replacement,
    RewriteResult,
    Scope,
    ScopeLike,
    SurrogateError,
)
from curation.views.surrogates.names import NameMention, parse_name, render_name
from curation.views.surrogates.nrp import nrp_reading, nrp_surrogate
from curation.views.surrogates.pools import NAME_POOL_LOCALES, NamePool, name_pool
from curation.views.surrogates.resolver import Identity, IdentityResolver, LocalPattern

__all__ = [
    "DATE_OFFSET_DRAWS",
    "DAYS_PER_MONTH",
    "DOC_V4_NETS",
    "EXAMPLE_DOMAINS",
    "MASK_CHAR",
    "MAX_DRAWS",
    "NAME_POOL_LOCALES",
    "STRICT_NAME_DRAWS",
    "WORD_CHECKED_LABELS",
    "Identity",
    "IdentityResolver",
    "LocalPattern",
    "NameMention",
    "NamePool",
    "NoFreshSurrogate",
    "Replacement",
    "RewriteResult",
    "Scope",
    "ScopeLike",
    "SurrogateEngine",
    "SurrogateError",
    "generalize_address",
    "iban_surrogate",
    "id_surrogate",
    "ip_surrogate",
    "mask_keep_last",
    "name_pool",
    "nrp_reading",
    "nrp_surrogate",
    "parse_name",
    "phone_surrogate",
    "render_name",
    "shift_dates",
    "ssn_surrogate",
]
