"""Generalizing an address to the US city and state at its end."""

from __future__ import annotations

import re

_STATES = {
    "AL": "Alabama",
    "AK": "Alaska",
    "AZ": "Arizona",
    "AR": "Arkansas",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DE": "Delaware",
    "FL": "Florida",
    "GA": "Georgia",
    "HI": "Hawaii",
    "ID": "Idaho",
    "IL": "Illinois",
    "IN": "Indiana",
    "IA": "Iowa",
    "KS": "Kansas",
    "KY": "Kentucky",
    "LA": "Louisiana",
    "ME": "Maine",
    "MD": "Maryland",
    "MA": "Massachusetts",
    "MI": "Michigan",
    "MN": "Minnesota",
    "MS": "Mississippi",
    "MO": "Missouri",
    "MT": "Montana",
    "NE": "Nebraska",
    "NV": "Nevada",
    "NH": "New Hampshire",
    "NJ": "New Jersey",
    "NM": "New Mexico",
    "NY": "New York",
    "NC": "North Carolina",
    "ND": "North Dakota",
    "OH": "Ohio",
    "OK": "Oklahoma",
    "OR": "Oregon",
    "PA": "Pennsylvania",
    "RI": "Rhode Island",
    "SC": "South Carolina",
    "SD": "South Dakota",
    "TN": "Tennessee",
    "TX": "Texas",
    "UT": "Utah",
    "VT": "Vermont",
    "VA": "Virginia",
    "WA": "Washington",
    "WV": "West Virginia",
    "WI": "Wisconsin",
    "WY": "Wyoming",
    "DC": "District of Columbia",
}
_STATE_BY_NAME = {name.casefold(): code for code, name in _STATES.items()}
_CITY_STATE_RE = re.compile(
    r"(?:^|,)\s*(?:\d+[^,]*?\s+)?(?P<city>[A-Za-z][A-Za-z .'-]*?)\s*,\s*(?P<state>[A-Za-z][A-Za-z ]*?)\.?"
    r"(?:\s+\d{5}(?:-\d{4})?)?\s*(?:,\s*(?:USA|US|United States))?\s*$"
)


def generalize_address(value: str) -> str:
    """'[City, ST]' when a US city/state is recognizable at the end of the address, else '[ADDRESS]'."""
    match = _CITY_STATE_RE.search(value.strip())
    if match:
        state = match.group("state").strip()
        code = state.upper() if state.upper() in _STATES else _STATE_BY_NAME.get(state.casefold())
        city = match.group("city").strip()
        if code and not re.search(r"\d", city):
            return f"[{city}, {code}]"
    return "[ADDRESS]"
