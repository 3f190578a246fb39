"""Code repositories: source and config files sharing one repository's credentials, some files clean."""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass
from typing import Any

from benchmarks.synthetic.clean_files import CLEAN_TEMPLATES
from benchmarks.synthetic.context import Ctx, retry
from benchmarks.synthetic.people import make_person
from benchmarks.synthetic.records import build_record, record_problems
from benchmarks.synthetic.secret_files import BASE_SECRET_TEMPLATES
from benchmarks.synthetic.secret_files_extended import EXTENDED_SECRET_TEMPLATES
from benchmarks.synthetic.text import CODE_SLOT, CodeTemplate, Doc, Slots, expand_optional
from benchmarks.synthetic.values import (
    ALNUM,
    ascii_slug,
    aws_key_id,
    aws_secret,
    b64,
    generic_api_key,
    github_token,
    ipv4,
    jwt,
    password,
    private_key,
    rand_str,
    rand_uuid,
    sha_hex,
    slack_token,
)
from curation.core.spans import (
    API_KEY,
    CONNECTION_STRING,
    EMAIL_ADDRESS,
    IP_ADDRESS,
    PASSWORD,
    PERSON,
    PRIVATE_KEY,
    SECRET,
    URL,
    USERNAME,
)

SERVICES = [
    "billing",
    "ledger",
    "checkout",
    "notifier",
    "search",
    "inventory",
    "payments",
    "auth",
    "reports",
    "shipping",
    "catalog",
    "webhooks",
    "scheduler",
    "analytics",
    "gateway",
    "profiles",
]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2"]


@dataclass
class Repo:
    """A fake repository: its name and the (value, label) slots its files share."""

    name: str
    svc: str
    slots: Slots


def _draw_repo_slots(ctx: Ctx, svc: str) -> Slots:
    rng = ctx.rng
    author, author2 = make_person(ctx, "en_US" if rng.random() < 0.7 else None), make_person(ctx)
    corp = ascii_slug(ctx.fakers["en_US"].domain_word()) or "corp"
    tld = rng.choice(["internal", "corp", "lan", "int"])
    db_host = f"{rng.choice(['pg', 'db', 'postgres', 'sql'])}-{rng.randint(1, 9):02d}.{svc}.{corp}.{tld}"
    api_host = f"{rng.choice(['api', 'svc', 'core'])}.{svc}.{corp}.{tld}"
    db_user = rng.choice(
        [
            f"{svc}_app{rng.randint(1, 99)}",
            f"svc_{svc}_{rng.randint(1, 99)}",
            f"{svc}_rw{rng.randint(1, 99)}",
            author.username,
        ]
    )
    db_pass = password(rng, url_safe=True)
    db_name = f"{svc}_{rng.choice(['prod', 'main', 'db', 'core'])}"
    redis_pass = password(rng, url_safe=True)
    redis_host = f"redis-{rng.randint(1, 9)}.{corp}.{tld}"
    mongo_host = f"cluster{rng.randint(0, 9)}.{corp}.mongodb.net"
    smtp_user = f"{rng.choice(['alerts', 'noreply', 'mailer', 'ops'])}{rng.randint(1, 99)}@{corp}.com"
    return {
        "svc": (svc, None),
        "corp": (corp, None),
        "region": (rng.choice(REGIONS), None),
        "port": (str(rng.choice([3000, 5000, 8000, 8080, 8443, 9000])), None),
        "author": (author.full, PERSON),
        "author_email": (author.email, EMAIL_ADDRESS),
        "author2": (author2.full, PERSON),
        "author2_email": (author2.email, EMAIL_ADDRESS),
        "home_user": (author.username, USERNAME),
        "deploy_user": (rng.choice([author2.username, f"deploy-{svc}{rng.randint(2, 9)}"]), USERNAME),
        "db_user": (db_user, USERNAME),
        "db_pass": (db_pass, PASSWORD),
        "db_host": (db_host, URL),
        "db_name": (db_name, None),
        "db_url": (
            f"{rng.choice(['postgres', 'postgresql'])}://{db_user}:{db_pass}@{db_host}:5432/{db_name}",
            CONNECTION_STRING,
        ),
        "jdbc_url": (
            f"jdbc:postgresql://{db_host}:5432/{db_name}?user={db_user}&password={db_pass}",
            CONNECTION_STRING,
        ),
        "ado_conn": (
            f"Server={db_host};Port=5432;Database={db_name};User Id={db_user};Password={db_pass};",
            CONNECTION_STRING,
        ),
        "mysql_url": (f"mysql://{db_user}:{db_pass}@{db_host}:3306/{db_name}", CONNECTION_STRING),
        "redis_url": (f"redis://:{redis_pass}@{redis_host}:6379/0", CONNECTION_STRING),
        "mongo_url": (f"mongodb+srv://{db_user}:{db_pass}@{mongo_host}/{db_name}", CONNECTION_STRING),
        "api_host": (api_host, URL),
        "api_url": (f"https://{api_host}/v{rng.randint(1, 3)}", URL),
        "ci_url": (f"https://{rng.choice(['ci', 'jenkins', 'builds'])}.{corp}.{tld}/job/{svc}", URL),
        "internal_ip": (ipv4(rng, private=True), IP_ADDRESS),
        "internal_ip2": (ipv4(rng, private=True), IP_ADDRESS),
        "aws_key": (aws_key_id(rng), API_KEY),
        "aws_secret": (aws_secret(rng), SECRET),
        "gh_token": (github_token(rng), API_KEY),
        "slack_token": (slack_token(rng), API_KEY),
        "api_key": (generic_api_key(rng), API_KEY),
        "api_key2": (generic_api_key(rng), API_KEY),
        "jwt_secret": (rand_str(rng, ALNUM, rng.randint(32, 48)), SECRET),
        "jwt": (jwt(rng), SECRET),
        "smtp_user": (smtp_user, EMAIL_ADDRESS),
        "smtp_pass": (password(rng), PASSWORD),
        "admin_pass": (password(rng), PASSWORD),
        "pem": (private_key(rng), PRIVATE_KEY),
        "pem_json": (private_key(rng, newline="\\n"), PRIVATE_KEY),
        "pem_yaml": (private_key(rng, indent="    "), PRIVATE_KEY),
    }


def make_repo(ctx: Ctx, name: str, svc: str) -> Repo:
    """A repository whose labeled values are all absent from the forbidden text."""
    slots = retry(
        lambda: _draw_repo_slots(ctx, svc),
        lambda sl: ctx.fresh([v for v, label in sl.values() if label]),
        "repo",
    )
    return Repo(name, svc, slots)


def file_extras(rng: random.Random) -> Slots:
    """Unlabeled high-entropy values (hard negatives) available to every file template."""
    word = rng.choice(["abc", "hello world", "The quick brown fox", "curation", "fixture-001", "payload"])
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.randbytes(rng.randint(40, 70))
    return {
        "sha": (sha_hex(rng), None),
        "sha_b": (sha_hex(rng), None),
        "sha_short": (sha_hex(rng, 7), None),
        "uuid1": (rand_uuid(rng), None),
        "uuid2": (rand_uuid(rng), None),
        "uuid3": (rand_uuid(rng), None),
        "sha256a": (sha_hex(rng, 64), None),
        "sha256b": (sha_hex(rng, 64), None),
        "sha256c": (sha_hex(rng, 64), None),
        "digest": (sha_hex(rng, 64), None),
        "integrity": ("sha512-" + b64(rng.randbytes(64)), None),
        "integrity2": ("sha512-" + b64(rng.randbytes(64)), None),
        "b64img": (b64(png), None),
        "b64img2": (b64(png[:16] + rng.randbytes(30)), None),
        "word": (word, None),
        "word_sha": (hashlib.sha256(word.encode()).hexdigest(), None),
        "word_md5": (hashlib.md5(word.encode()).hexdigest(), None),
        "hmac_key": ("0b" * 20, None),
        "nonce": (sha_hex(rng, 24), None),
        "batch": (str(rng.choice([100, 250, 500, 1000])), None),
        "version": (f"{rng.randint(0, 4)}.{rng.randint(0, 19)}.{rng.randint(0, 30)}", None),
        "rev": (sha_hex(rng, 12), None),
        "rev2": (sha_hex(rng, 12), None),
        "h1a": (b64(rng.randbytes(32)), None),
        "h1b": (b64(rng.randbytes(32)), None),
        "h1c": (b64(rng.randbytes(32)), None),
        "vector_in": (sha_hex(rng, 96), None),
        "vector_out": (sha_hex(rng, 128), None),
    }


SECRET_TEMPLATES = [*BASE_SECRET_TEMPLATES, *EXTENDED_SECRET_TEMPLATES]


def code_record(ctx: Ctx, repo: Repo, template: CodeTemplate) -> tuple[str, list[dict[str, Any]], str]:
    """Render one file of ``repo``; returns (text, spans, path)."""
    slots = dict(repo.slots)
    slots.update(file_extras(ctx.rng))
    body = expand_optional(ctx.rng, template.body)
    doc = Doc()
    doc.render(body, slots, CODE_SLOT)
    path = template.path.format(svc=repo.svc, corp=repo.slots["corp"][0])
    return doc.text, doc.spans, path


def gen_repo_files(ctx: Ctx, repo: Repo, n_files: int, clean_share: float, extended: bool) -> list[dict[str, Any]]:
    """``n_files`` distinct files of ``repo``; about ``clean_share`` of them carry no private values."""
    rng = ctx.rng
    secret_pool = [t for t in SECRET_TEMPLATES if extended or not t.extended]
    clean_pool = [t for t in CLEAN_TEMPLATES if extended or not t.extended]
    n_clean = sum(1 for _ in range(n_files) if rng.random() < clean_share)
    chosen = rng.sample(clean_pool, n_clean) + rng.sample(secret_pool, n_files - n_clean)
    rng.shuffle(chosen)
    seen_paths: list[str] = []
    out = []
    for template in chosen:
        for _ in range(50):
            text, spans, path = code_record(ctx, repo, template)
            if not record_problems(text, spans, ctx):
                break
        else:
            raise RuntimeError(f"could not render {template.path} for {repo.name}")
        if path in seen_paths:
            continue
        seen_paths.append(path)
        meta = {"language": template.language, "path": path}
        out.append(build_record("", "code", repo.name, text, spans, meta))
    return out


def letter_repo_names(ctx: Ctx, n: int, prefix: str) -> list[tuple[str, str]]:
    """(repo name, service) pairs named ``<prefix>repo-a``, ``<prefix>repo-b``, ..."""
    services = list(SERVICES)
    ctx.rng.shuffle(services)
    names = [f"{prefix}repo-{string.ascii_lowercase[i % 26]}{'' if i < 26 else i // 26}" for i in range(n)]
    return [(name, services[i % len(services)]) for i, name in enumerate(names)]


def gen_code_secrets(ctx: Ctx, n_files: int) -> list[dict[str, Any]]:
    """Extended code-secrets benchmark: repos of 5-10 files named after their company, ~30% clean files."""
    rng = ctx.rng
    records: list[dict[str, Any]] = []
    used_names: list[str] = []
    while len(records) < n_files:
        repo = make_repo(ctx, "", rng.choice(SERVICES))
        suffix = rng.choice(["api", "service", "worker", "infra", "app", "tools"])
        repo.name = f"{repo.slots['corp'][0]}-{repo.svc}-{suffix}"
        if repo.name in used_names:
            continue
        used_names.append(repo.name)
        want = min(rng.randint(5, 10), n_files - len(records))
        records.extend(gen_repo_files(ctx, repo, want, 0.3, extended=True))
    return records
