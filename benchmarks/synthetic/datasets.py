"""The three bundled data sets (sample, validation, code secrets) and the mixed record stream behind them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.synthetic.chats import TOPICS, Topic, agent_pool, gen_conversation, split_parts
from benchmarks.synthetic.context import Ctx
from benchmarks.synthetic.notes import gen_note
from benchmarks.synthetic.records import assign_ids, to_jsonl
from benchmarks.synthetic.repos import gen_code_secrets, gen_repo_files, letter_repo_names, make_repo

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SEED = 20261130
# Faker's providers change between releases; byte-identical output is only promised for this version.
GENERATED_WITH_FAKER = "40.63.0"
DATA_DIR = ROOT / "curation" / "data"
SAMPLE_FILE = "sample_corpus.jsonl"
VALIDATION_FILE = "validation.jsonl"
CODE_SECRETS_FILE = "code_secrets.jsonl"


def gen_mixed(
    ctx: Ctx,
    total: int,
    n_notes: int,
    n_repos: int,
    files_per_repo: tuple[int, int],
    scope_prefix: str,
    clean_share: float,
) -> list[dict[str, Any]]:
    """``total`` records of one data set: code files, notes, then chats for the rest, interleaved."""
    rng = ctx.rng
    repos: list[list[dict[str, Any]]] = []
    for name, svc in letter_repo_names(ctx, n_repos, scope_prefix):
        repo = make_repo(ctx, name, svc)
        repos.append(gen_repo_files(ctx, repo, rng.randint(*files_per_repo), clean_share, extended=False))
    notes: list[list[dict[str, Any]]] = []
    n_done = 0
    while n_done < n_notes:
        scope = f"{scope_prefix}note-{len(notes) + 1:04d}"
        size = 2 if rng.random() < 0.2 and n_notes - n_done >= 2 else 1
        notes.append([gen_note(ctx, scope) for _ in range(size)])
        n_done += size
    n_chat = total - n_notes - sum(len(g) for g in repos)
    agents = agent_pool(ctx)
    sizes = split_parts(rng, n_chat)
    topics: list[Topic] = []
    while len(topics) < len(sizes):
        topics.extend(rng.sample(TOPICS, len(TOPICS)))
    chats = [
        gen_conversation(ctx, f"{scope_prefix}conv-{i:04d}", parts, agents, topic)
        for i, (parts, topic) in enumerate(zip(sizes, topics, strict=False), 1)
    ]
    groups = chats + notes + repos
    rng.shuffle(groups)
    return [rec for group in groups for rec in group]


def generate(seed: int = DEFAULT_SEED) -> dict[str, bytes]:
    """Build the three data sets; returns file name -> JSONL bytes."""
    sample_ctx = Ctx("sample", seed, years=(2021, 2024), birth_years=(1938, 1970))
    sample = assign_ids(
        gen_mixed(
            sample_ctx, total=150, n_notes=30, n_repos=6, files_per_repo=(5, 6), scope_prefix="", clean_share=0.25
        ),
        "sample",
    )
    sample_text = "\n".join(str(r["text"]) for r in sample)

    val_ctx = Ctx("validation", seed, years=(2025, 2026), birth_years=(1971, 2004), forbidden=sample_text)
    validation = assign_ids(
        gen_mixed(val_ctx, total=300, n_notes=50, n_repos=9, files_per_repo=(4, 6), scope_prefix="v", clean_share=0.25),
        "val",
    )

    code_ctx = Ctx(
        "code_secrets",
        seed,
        years=(2019, 2020),
        birth_years=(1960, 1999),
        forbidden=sample_text + "\n" + "\n".join(str(r["text"]) for r in validation),
    )
    code = assign_ids(gen_code_secrets(code_ctx, 200), "cs")
    return {
        SAMPLE_FILE: to_jsonl(sample),
        VALIDATION_FILE: to_jsonl(validation),
        CODE_SECRETS_FILE: to_jsonl(code),
    }
