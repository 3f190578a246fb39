"""The redaction convention: one rule per entity label, loaded from YAML and validated.

The convention is data, not code, so the dataset card can print exactly what was applied
and a reviewer can change a style without touching the surrogate engine.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from curation.core import spans as S

DEFAULT_PATH = Path(__file__).parent.parent / "data" / "convention.yaml"
DEFAULT_KEY = "default"

STYLES = (
    "surrogate",
    "typed_tag",
    "indexed_tag",
    "mask_keep_last",
    "delete",
    "generalize",
    "date_shift",
)
SCOPES = ("document", "conversation", "account", "global")
DEFAULT_SCOPE = "conversation"

KNOWN_LABELS = (
    S.PERSON,
    S.EMAIL_ADDRESS,
    S.PHONE_NUMBER,
    S.CREDIT_CARD,
    S.IBAN_CODE,
    S.US_SSN,
    S.IP_ADDRESS,
    S.STREET_ADDRESS,
    S.LOCATION,
    S.NRP,
    S.DATE_TIME,
    S.ORGANIZATION,
    S.TITLE,
    S.URL,
    S.ACCOUNT_ID,
    S.ID_NUMBER,
    S.AGE,
    S.USERNAME,
    S.PASSWORD,
    S.API_KEY,
    S.PRIVATE_KEY,
    S.CONNECTION_STRING,
    S.SECRET,
    S.SURPRISE,
)
TOP_LEVEL_KEYS = ("version", "allow_global_scope", "entities")
RULE_KEYS = ("style", "source", "scope", "keep_last", "keep")


class ConventionError(ValueError):
    """A convention file that cannot be used; the message names the file, the key and what is allowed."""

    def __init__(self, where: str, key: str, problem: str, allowed: tuple[str, ...] | None = None) -> None:
        message = f"{where}: {key}: {problem}"
        if allowed:
            message += f" (allowed: {', '.join(allowed)})"
        super().__init__(message)
        self.where = where
        self.key = key


@dataclass(frozen=True, slots=True)
class Rule:
    """How one label is rewritten: style, where replacements come from, and how widely they hold."""

    label: str
    style: str
    source: str = ""
    scope: str = DEFAULT_SCOPE
    keep_last: int | None = None
    keep: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"style": self.style, "source": self.source, "scope": self.scope}
        if self.keep_last is not None:
            out["keep_last"] = self.keep_last
        if self.keep:
            out["keep"] = list(self.keep)
        return out


@dataclass(frozen=True)
class Convention:
    """All rules plus the exact text they came from (printed in the dataset card)."""

    rules: Mapping[str, Rule]
    allow_global_scope: bool = False
    version: int = 1
    source_path: str | None = None
    text: str | None = field(default=None, repr=False)

    def rule_for(self, label: str) -> Rule:
        """The rule for ``label``, falling back to the ``default`` rule for labels without one."""
        return self.rules.get(label) or self.rules[DEFAULT_KEY]

    def labels(self) -> list[str]:
        return [k for k in self.rules if k != DEFAULT_KEY]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "allow_global_scope": self.allow_global_scope,
            "entities": {label: rule.to_dict() for label, rule in self.rules.items()},
        }

    def to_yaml(self) -> str:
        """The exact text the convention was loaded from, or a YAML dump if it was built in code."""
        if self.text is not None:
            return self.text
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)


def load_convention(path: str | Path | None = None) -> Convention:
    """Load and validate a convention file; ``None`` loads the packaged default."""
    file = Path(path) if path is not None else DEFAULT_PATH
    where = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConventionError(where, "<file>", f"cannot be read ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConventionError(where, "<file>", f"is not valid YAML{line}") from None
    return convention_from_dict(data, where=where, text=text)


def convention_from_dict(data: Any, *, where: str = "<dict>", text: str | None = None) -> Convention:
    """Validate an already-parsed convention mapping (same rules as :func:`load_convention`)."""
    if not isinstance(data, dict):
        raise ConventionError(where, "<top level>", "must be a mapping with an 'entities' key")
    _check_keys(where, "<top level>", data, TOP_LEVEL_KEYS)
    allow_global = data.get("allow_global_scope", False)
    if not isinstance(allow_global, bool):
        raise ConventionError(where, "allow_global_scope", "must be true or false")
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConventionError(where, "version", "must be an integer")
    entities = data.get("entities")
    if not isinstance(entities, dict) or not entities:
        raise ConventionError(where, "entities", "must be a non-empty mapping of label -> rule")
    rules = {}
    for label, raw in entities.items():
        if label != DEFAULT_KEY and label not in KNOWN_LABELS:
            raise ConventionError(where, f"entities.{label}", "unknown label", (DEFAULT_KEY, *KNOWN_LABELS))
        rules[label] = _parse_rule(where, str(label), raw, allow_global)
    if DEFAULT_KEY not in rules:
        raise ConventionError(where, f"entities.{DEFAULT_KEY}", "is required (the fallback rule)")
    return Convention(rules, allow_global, version, where, text)


def _parse_rule(where: str, label: str, raw: Any, allow_global: bool) -> Rule:
    key = f"entities.{label}"
    if not isinstance(raw, dict):
        raise ConventionError(where, key, "must be a mapping with at least 'style'")
    _check_keys(where, key, raw, RULE_KEYS)
    style = raw.get("style")
    if style not in STYLES:
        raise ConventionError(where, f"{key}.style", f"invalid value {style!r}", STYLES)
    if style == "date_shift" and label not in (S.DATE_TIME,):
        raise ConventionError(where, f"{key}.style", "date_shift only applies to DATE_TIME")
    scope = raw.get("scope", DEFAULT_SCOPE)
    if scope not in SCOPES:
        raise ConventionError(where, f"{key}.scope", f"invalid value {scope!r}", SCOPES)
    if scope == "global":
        if not allow_global:
            raise ConventionError(where, f"{key}.scope", "global needs 'allow_global_scope: true' at the top level")
        warnings.warn(
            f"{where}: {key} uses global scope: one original maps to one surrogate across the whole "
            "dataset, which links records of different conversations and accounts",
            stacklevel=3,
        )
    return Rule(
        label=label,
        style=style,
        source=_as_str(where, f"{key}.source", raw.get("source", "")),
        scope=scope,
        keep_last=_keep_last(where, key, style, raw),
        keep=_keep(where, f"{key}.keep", raw.get("keep", ())),
    )


def _keep_last(where: str, key: str, style: str, raw: dict) -> int | None:
    value = raw.get("keep_last")
    if value is None:
        return 4 if style == "mask_keep_last" else None
    if style != "mask_keep_last":
        raise ConventionError(where, f"{key}.keep_last", "only applies to style mask_keep_last")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConventionError(where, f"{key}.keep_last", "must be a non-negative integer")
    return value


def _keep(where: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConventionError(where, key, "must be a string or a list of strings")
    return tuple(value)


def _as_str(where: str, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConventionError(where, key, "must be a string")
    return value


def _check_keys(where: str, key: str, data: dict, allowed: tuple[str, ...]) -> None:
    for name in data:
        if name not in allowed:
            raise ConventionError(where, f"{key}.{name}" if key != "<top level>" else str(name), "unknown key", allowed)
