"""Credential rules: secrets by name (assignments, env blocks, flags), vendor token prefixes, PEM keys,
connection strings, auth headers, usernames and hostnames in config."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from curation.core.spans import API_KEY, CONNECTION_STRING, PASSWORD, PRIVATE_KEY, SECRET, URL, USERNAME, Span
from curation.detect.base import _TIER_CREDENTIAL, _TIER_PATTERN, Rule, _c, _query_value
from curation.detect.validators import (
    _NOT_USERNAMES,
    _auth_value_ok,
    _bare_value_ok,
    _ipv4_ok,
    _private_url,
    _query_password_ok,
    _query_secret_ok,
    _secret_value_ok,
    _token_value_ok,
    _username_ok,
)

# Names of config keys / variables whose values are secrets.
_PASSWORD_NAME = r"(?:[\w.-]*?(?:password|passwd|passphrase|passcode)|(?:[\w.-]*?[_.-])?(?:pass|pwd|pw))"
_KEY_NAME = (
    r"[\w.-]*?(?:api[_.-]?key|apikey|access[_.-]?key|secret[_.-]?access[_.-]?key|secret[_.-]?key"
    r"|private[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|app[_.-]?key|consumer[_.-]?key"
    r"|client[_.-]?key|license[_.-]?key|subscription[_.-]?key)(?:[_.-]?id)?"
)
_SECRET_NAME = (
    r"[\w.-]*?(?:secret|token|auth|credential|creds|bearer|session[_.-]?key|cookie[_.-]?secret|salt"
    r"|webhook[_.-]?secret|private|auth[_.-]?key|nonce[_.-]?key)"
)
_USER_NAME = r"(?:[\w.-]*?[_.-])?(?:user(?:name)?|login)"
# name, optional closing quote of a JSON/dict key, then an assignment operator
_ASSIGN = r"(?:[\"'`]?\]?[ \t]*(?P<op>:=|=>|==|!=|\+=|=|:|[ \t]is)[ \t]*)"
# an environment lookup with a literal fallback: process.env.X || 'v', os.environ.get("X", "v"), ...
_ENV_FALLBACK = (
    r"(?:process\.env\.\w+|process\.env\[[^\]\n]+\]|os\.environ\.get\([^,\n)]+|os\.getenv\([^,\n)]+"
    r"|getenv\([^,\n)]+|ENV\.fetch\([^,\n)]+|env\([^,\n)]+)\s*(?:\|\||\?\?|,|\bor\b)\s*"
)


def _quoted(tag: str) -> str:
    """A quoted literal whose inside is captured in groups named ``q<tag>*`` (AssignmentRule reads them)."""
    return (
        rf"(?:\"(?P<q{tag}d>[^\"\n]{{1,300}})\"|'(?P<q{tag}s>[^'\n]{{1,300}})'"
        rf"|`(?P<q{tag}b>[^`\n]{{1,300}})`)"
    )


def _assignment(name: str) -> re.Pattern[str]:
    """``name = "v"``, ``name: v``, ``--name v``, ``define('NAME', 'v')``, ``X || 'v'``: only v is labeled."""
    return _c(
        rf"(?i)\(\s*[\"'](?P<cname>{name})[\"']\s*,\s*{_quoted('c')}"
        rf"|(?<![\w-])--?(?P<fname>{name})[ \t]+(?P<spaced>[^\s\"'`,;=-][^\s\"'`,;]{{3,200}})(?=\s|$)"
        rf"|(?<![\w])(?P<name>{name})(?![\w])(?!\s*\(){_ASSIGN}(?:{_ENV_FALLBACK}{_quoted('f')}"
        rf"|{_quoted('a')}|(?P<bare>(?:[^\s\"'`,;&)}}\]<>]|&(?![\w.-]+=)){{1,300}}))"
    )


def _k8s_env(name: str) -> re.Pattern[str]:
    """Kubernetes / compose style ``- name: DB_PASSWORD`` followed by ``value: "v"``."""
    return _c(
        rf"(?i)\bname:[ \t]*[\"']?(?P<name>{name})[\"']?[ \t]*\r?\n[ \t]*value:[ \t]*(?:{_quoted('k')}"
        rf"|(?P<bare>[^\s\"'`]{{1,300}}))"
    )


_LINE_PREFIX = re.compile(r"[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?[\"']?$")
_LINE_SUFFIX = re.compile(r"[ \t]*[,;]?[ \t]*(?:#.*)?$", re.MULTILINE)


@dataclass(frozen=True)
class AssignmentRule(Rule):
    """A :class:`Rule` whose value sits in one of several alternative groups (quoted or bare).

    Unquoted values must not look like code (snake_case names, calls, annotations); with
    ``bare_whole_line`` they must also be a whole ``key = value`` line, as in .env / ini / yaml files.
    """

    bare_whole_line: bool = False

    def find(self, text: str) -> Iterator[Span]:
        groups = [g for g in self.pattern.groupindex if g.startswith("q") or g in ("bare", "spaced")]
        for m in self.pattern.finditer(text):
            g = next((g for g in groups if m.group(g) is not None), None)
            if g is None:
                continue
            start, end = m.span(g)
            value = text[start:end]
            quoted = g.startswith("q")
            name = m.group("name") or m.group("cname") or m.group("fname") or ""
            op = m.groupdict().get("op")
            if not quoted:
                while end > start and text[end - 1] in ":.,;":
                    end -= 1
                value = text[start:end]
                if name.lower() in ("pass", "pw") or op in ("==", "!=") or not _bare_value_ok(value):
                    continue
                if op == ":" and start == m.end("op"):
                    continue  # "passwd:gecos" is a token, YAML needs a space after the colon
                simple = sum(bool(re.search(p, value)) for p in (r"[A-Za-z]", r"\d", r"[^A-Za-z0-9]")) < 2
                if (self.bare_whole_line or simple) and not self._whole_line(text, m.start("name"), end):
                    continue
            if op is not None and op.strip() == "is" and not _token_value_ok(value):
                continue  # prose: "the token is defined"
            if self.validator is not None and not self.validator(value):
                continue
            score = self.score if quoted else self.score - 0.1
            yield Span(start, end, self.label, score, f"pattern:{self.name}")

    @staticmethod
    def _whole_line(text: str, name_start: int, value_end: int) -> bool:
        if name_start < 0:
            return False
        line_start = text.rfind("\n", 0, name_start) + 1
        return bool(_LINE_PREFIX.match(text[line_start:name_start])) and bool(_LINE_SUFFIX.match(text, value_end))


def _assignment_rules() -> tuple[Rule, ...]:
    """Secret-by-name rules in both assignment and k8s env layouts."""
    out: list[Rule] = []
    for kind, name, label, score, validator in (
        ("password", _PASSWORD_NAME, PASSWORD, 0.85, _secret_value_ok),
        ("key", _KEY_NAME, API_KEY, 0.85, _token_value_ok),
        ("secret", _SECRET_NAME, SECRET, 0.8, _token_value_ok),
    ):
        out.append(
            AssignmentRule(f"{kind}_assignment", label, _assignment(name), score, _TIER_CREDENTIAL, validator, True)
        )
        out.append(AssignmentRule(f"{kind}_env", label, _k8s_env(name), score, _TIER_CREDENTIAL, validator, True))
    out.append(
        AssignmentRule(
            "username_assignment",
            USERNAME,
            _assignment(_USER_NAME),
            0.65,
            _TIER_PATTERN,
            _username_ok,
            True,
            bare_whole_line=True,
        )
    )
    return tuple(out)


def _url_password_ok(value: str) -> bool:
    """``scheme://user:pass@host`` with a real password, not ``user:pass`` / ``{user}:{pw}`` templates."""
    userinfo = value.split("://", 1)[1].rsplit("@", 1)[0]
    password = userinfo.split(":", 1)[1] if ":" in userinfo else ""
    if re.search(r"[{}$<>\[\]]|%\(|%s", userinfo):
        return False
    return _secret_value_ok(password) or (len(password) >= 3 and any(c.isdigit() for c in password))


_HOST_KEY = r"(?:host|hostname|server|endpoint|fqdn)"
# attribute chains on usual code objects ("self.proxy.host") are not hostnames
_CODE_OBJECT = _c(
    r"(?i)(?:self|this|cls|os|sys|request|req|response|resp|result|res|config|conf|cfg|settings|args|opts"
    r"|options|ctx|context|app|env|url|parsed|uri|conn|client|server|socket|sock|proxy|event|msg|params)\."
)
_HOSTNAME = r"(?=[a-z0-9-]*[a-z])[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9][a-z0-9-]{0,62})+"


class _MultiGroupRule(Rule):
    """A rule whose value is in whichever of the groups ``v``, ``w``, ``x`` took part in the match."""

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            g = next((k for k in ("v", "w", "x") if k in self.pattern.groupindex and m.group(k) is not None), None)
            if g is None:
                continue
            start, end = m.span(g)
            if self.validator is not None and not self.validator(text[start:end]):
                continue
            yield Span(start, end, self.label, self.score, f"pattern:{self.name}")


# HTTP authentication schemes whose credential is one token68-like value (RFC 7235): Basic, Bearer, ...
_AUTH_SCHEME = r"(?:basic|bearer|token|jwt|oauth|apikey|api-key|key|sso-key|ssws|negotiate|ntlm|hmac)"
_TOKEN68 = r"[A-Za-z0-9._~+/=-]"  # after a scheme word also ":" (FCM's "key=AAAA...:APA91b...", "user:pass")


class _AuthHeaderRule(Rule):
    """``Authorization: <scheme> <credential>``: the credential (group ``v``) after a scheme word passes
    :func:`_auth_value_ok`; a credential with no scheme word (group ``w``, a raw API key) has >= 16
    characters and looks random (:func:`_token_value_ok`), so neither "Authorization: pending" in prose nor
    an authorization code ("Authorization: AB12CD34", an id) is one."""

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            g = "v" if m.group("v") is not None else "w"
            start, end = m.span(g)
            while end > start and text[end - 1] == ".":
                end -= 1  # the full stop of a sentence: a token68 value never ends with one
            value = text[start:end]
            if (_auth_value_ok if g == "v" else _token_value_ok)(value):
                yield Span(start, end, self.label, self.score, f"pattern:{self.name}")


_QUERY_SECRET_KEYS = (
    r"token|(?:access|refresh|id|auth|api|session|security|oauth|x-amz-security)[_.-]?token|api[_.-]?key|apikey"
    r"|access[_.-]?key|secret[_.-]?key|private[_.-]?key|key|secret|client[_.-]?secret|session|session[_.-]?id"
    r"|sessionid|sid|jsessionid|phpsessid|sig|signature|x-amz-signature"
)
_QUERY_PASSWORD_KEYS = r"password|passwd|passphrase|pwd|pass"


class _QuerySecretRule(Rule):
    """A query-string secret: ``?token=v`` / ``&session=v`` values must look random, ``&password=v`` /
    ``&pwd=v`` values be plausible passwords (the key is group ``k``)."""

    def find(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            start, end = m.span("v")
            while end > start and text[end - 1] in ".,;:)]}>":
                end -= 1
            value = text[start:end]
            password = re.fullmatch(_QUERY_PASSWORD_KEYS, m.group("k"), re.IGNORECASE) is not None
            if (_query_password_ok if password else _query_secret_ok)(value):
                yield Span(start, end, self.label, self.score, f"pattern:{self.name}")


def _pem_validator(value: str) -> bool:
    return "PRIVATE KEY" in value


_B64 = r"A-Za-z0-9+/="

CREDENTIAL_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        PRIVATE_KEY,
        _c(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: "
            r"BLOCK)?-----(?:[\s\S]{0,20000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            rf"|(?:(?:\\n|\\r|\s|[{_B64}:\-,])+))"
        ),
        1.0,
        _TIER_CREDENTIAL,
        _pem_validator,
        True,
    ),
    Rule(
        "aws_key",
        API_KEY,
        _c(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "github_token",
        API_KEY,
        _c(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        0.99,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "gitlab_token",
        API_KEY,
        _c(r"\bgl(?:pat|dt|rt|cbt|ptt|ft|agent)-[A-Za-z0-9_-]{20,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("slack_token", API_KEY, _c(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule(
        "slack_webhook",
        SECRET,
        _c(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "stripe_key",
        API_KEY,
        _c(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}\b|\bwhsec_[A-Za-z0-9]{20,}\b"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("google_api_key", API_KEY, _c(r"\bAIza[0-9A-Za-z_-]{35}(?![\w-])"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule(
        "google_oauth",
        SECRET,
        _c(r"\bGOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[0-9A-Za-z_-]{20,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "openai_key",
        API_KEY,
        _c(r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-)?[A-Za-z0-9_-]{20,}(?![\w-])"),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "sendgrid_key",
        API_KEY,
        _c(r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("hf_token", API_KEY, _c(r"\bhf_[A-Za-z0-9]{30,}\b"), 0.9, _TIER_CREDENTIAL, None, True),
    Rule("npm_token", API_KEY, _c(r"\bnpm_[A-Za-z0-9]{36}\b"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule("pypi_token", API_KEY, _c(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule("twilio_key", API_KEY, _c(r"\bSK[0-9a-fA-F]{32}\b"), 0.8, _TIER_CREDENTIAL, None, True),
    Rule("mailgun_key", API_KEY, _c(r"\bkey-[0-9a-zA-Z]{32}\b"), 0.85, _TIER_CREDENTIAL, None, True),
    Rule(
        "shopify_token",
        API_KEY,
        _c(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule("digitalocean_token", API_KEY, _c(r"\bdo[pro]_v1_[a-f0-9]{64}\b"), 0.95, _TIER_CREDENTIAL, None, True),
    Rule(
        "telegram_bot_token",
        API_KEY,
        _c(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "discord_token",
        API_KEY,
        _c(r"\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b"),
        0.85,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "jwt",
        SECRET,
        _c(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        0.95,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    _AuthHeaderRule(
        "auth_header",
        SECRET,
        # Authorization / Proxy-Authorization in a header dump, a log, JSON, a dict or a curl -H flag:
        # "Authorization: Basic b3Js...==", authorization=Bearer ..., "Authorization": "Bearer ...",
        # headers["Authorization"] = "...", setHeader("Authorization", "..."); only the credential is labeled
        _c(
            rf"(?i)(?<![\w-])(?:[\w-]*-)?authori[sz]ation\\?[\"']?\]?[ \t]*(?::|=>|=|,)[ \t]*\\?[\"'\[]?[ \t]*"
            rf"(?:{_AUTH_SCHEME}(?:[ \t]+|(?<=key)=)(?P<v>[A-Za-z0-9._~+/=:-]{{8,2048}})|(?P<w>{_TOKEN68}{{16,2048}}))"
            rf"(?=$|[\s\"'`,;&)}}\]<>\\|])"
        ),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    _QuerySecretRule(
        "query_secret",
        SECRET,
        # ?token=..., &access_token=..., &api_key=..., &password=..., &session=... in a URL query string
        _query_value(rf"(?P<k>{_QUERY_SECRET_KEYS}|{_QUERY_PASSWORD_KEYS})"),
        0.7,  # below the assignment rules (bare 0.75): their PASSWORD / API_KEY label wins a tie
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "url_credentials",
        CONNECTION_STRING,
        _c(r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s/:@'\"<>\[]{0,128}:[^\s@'\"<>/]{1,128}@[^\s'\"<>]{1,512}"),
        0.95,
        _TIER_CREDENTIAL,
        lambda v: _url_password_ok(v),
        True,
    ),
    Rule(
        "url_query_credentials",
        CONNECTION_STRING,
        _c(
            r"(?i)\b(?:jdbc:)?(?:postgres(?:ql)?|mysql|mariadb|sqlserver|mssql|oracle(?::thin)?"
            r"|mongodb(?:\+srv)?|redis|rediss|amqps?|db2|snowflake|clickhouse|cockroachdb|sqlite|h2|neo4j"
            r"|cassandra):(?://)?[^\s'\"<>]{1,512}?[?&;](?:password|passwd|pwd)=[^\s&;'\"<>]+[^\s'\"<>]*"
        ),
        0.9,
        _TIER_CREDENTIAL,
        None,
        True,
    ),
    Rule(
        "kv_connection_string",
        CONNECTION_STRING,
        _c(
            r"(?i)(?<![\w])(?:(?:server|data source|host|address|addr|network address"
            r"|defaultendpointsprotocol|accountname|endpoint|driver|provider|database|initial catalog"
            r"|user id|uid|username|user)\s*=[^;\n\"']{0,200};\s*){1,12}(?:[\w ]{1,40}=[^;\n\"']{0,300}(?:;"
            r"|(?=[\"'\n]|$))\s*){1,12}"
        ),
        0.9,
        _TIER_CREDENTIAL,
        lambda v: re.search(r"(?i)(?:password|pwd|accountkey|sharedaccesskey)\s*=\s*[^;\s]", v) is not None,
        True,
    ),
    *_assignment_rules(),
    Rule(
        "env_key_variable",
        API_KEY,
        _c(r"(?<![\w-])[A-Z][A-Z0-9_]*_KEY[\"']?[ \t]*[=:][ \t]*[\"']?(?P<v>[A-Za-z0-9+/_.=-]{16,300})"),
        0.75,
        _TIER_CREDENTIAL,
        _token_value_ok,
        True,
    ),
    Rule(
        "stated_username",
        USERNAME,
        _c(
            r"(?i)\b(?:user ?name|user ?id|login|log-in|handle|screen ?name|gamertag|nickname)[ \t]*(?:is"
            r"|should be|was|will be|:|=)[ \t]*[\"'@]?(?P<v>[a-z0-9][\w.-]{1,31}[a-z0-9])\b"
        ),
        0.65,
        _TIER_PATTERN,
        lambda v: _username_ok(v) and v.lower() not in _NOT_USERNAMES,
        prose_only=True,
    ),
    Rule(
        "cli_user",
        USERNAME,
        _c(
            r"(?<![\w-])(?:psql|pg_dump|pg_dumpall|pg_restore|mysql|mysqldump|mongo|mongosh|mongodump"
            r"|redis-cli|sqlcmd|clickhouse-client)\b[^\n]*?[ \t](?:-U|-u"
            r"|--user(?:name)?=?)[ \t]*(?P<v>[\w.@-]{2,64})"
        ),
        0.7,
        _TIER_PATTERN,
        _username_ok,
        True,
    ),
    Rule(
        "todo_user",
        USERNAME,
        _c(r"\b(?:TODO|FIXME|XXX|HACK|NOTE|BUG)\((?P<v>@?(?=[\w.-]*[a-z])[\w.-]{2,40})\)"),
        0.7,
        _TIER_PATTERN,
        _username_ok,
        True,
    ),
    _MultiGroupRule(
        "host_assignment",
        URL,
        # quoted value, a whole "host: value" config line, or a -h/--host flag; never "host = self.host"
        _c(
            rf"(?im)\b(?:[\w-]*[_.-])?{_HOST_KEY}[\"']?[ \t]*(?:=>|[:=]|,)[ \t]*[\"'](?P<v>{_HOSTNAME})[\"']"
            rf"|^[ \t]*-?[ \t]*(?:[\w-]*[_.-])?{_HOST_KEY}[ \t]*[:=][ \t]*(?P<w>{_HOSTNAME})[ \t]*(?:#.*)?$"
            rf"|(?<![\w-])(?:-h|--host=?)[ \t]*(?P<x>{_HOSTNAME})(?![\w.-])"
        ),
        0.6,
        _TIER_PATTERN,
        lambda v: (
            not _ipv4_ok(v)
            and _private_url(v)
            and not _CODE_OBJECT.match(v)
            and not v.lower().endswith((".py", ".js", ".json", ".yaml", ".yml", ".txt", ".md", ".sh", ".log"))
        ),
        True,
    ),
    Rule(
        "cli_password",
        PASSWORD,
        _c(r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p(?P<v>[^\s\"'-][^\s\"']{3,})"),
        0.8,
        _TIER_CREDENTIAL,
        _secret_value_ok,
        True,
    ),
)
