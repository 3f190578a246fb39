"""Where the model-bound work runs: in the Dagster step's own process (``local``) or on a Ray cluster (``ray``).

With ``ray``, the batch's texts still to score go to a pool of model actors in chunks (the same chunks the
local path and the shards cut, ``stages.scoring.scoring_chunks``); each actor loads the reference model once
and scores a chunk with the same call plan (``scoring.CallPlan``: every call's shape fixed by its own chunks,
one intra-op thread per call), so its scores are the local path's to the bit. Results come back as Arrow
tables and the calling step, the one DuckDB writer, inserts each chunk as it arrives: nothing on a Ray node
opens the warehouse or the vault. A chunk whose actor died (its node went away) is resubmitted to a surviving
actor; if the whole cluster goes, the chunks already written stay written and a rerun scores only the rest.

Plain ``ray`` client calls (no dagster-ray): the step stays the control plane and streams progress into the
run log; one ``ray.init(address=...)``, a pool of actors, ``ray.wait`` on their results.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict

from curation.core.config import EngineConfig
from curation.score.scorer import ScoringConfig


class EngineError(RuntimeError):
    """The engine could not run the work (cluster unreachable, every actor gone)."""


def _actor_class():
    import ray

    @ray.remote
    class ScoringActor:
        """One reference-model replica: loads the model once, scores chunks, returns Arrow tables. With
        ``keep_s`` > 0 it outlives the run and exits by itself after ``keep_s`` idle seconds."""

        def __init__(self, scoring: dict, threads: int, keep_s: float = 0.0) -> None:
            started = time.perf_counter()
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from curation.score.scorer import ReferenceScorer

            self.scorer = ReferenceScorer(ScoringConfig(**scoring))
            self.scorer.concurrency = max(1, threads)
            self.scorer.load()  # now: a chunk's time is then the model's, and a failed load shows at start
            self.load_seconds = time.perf_counter() - started
            self.busy = False
            self.last_used = time.monotonic()
            if keep_s > 0:
                import threading

                threading.Thread(target=self._exit_when_idle, args=(keep_s,), daemon=True).start()

        def _exit_when_idle(self, keep_s: float) -> None:
            """A kept actor frees its CPU / GPU and memory once no batch used it for ``keep_s`` seconds (a
            call racing the exit sees a dead actor, and its chunk is resubmitted like any other)."""
            while True:
                time.sleep(min(5.0, keep_s))
                if not self.busy and time.monotonic() - self.last_used > keep_s:
                    import ray

                    # an intended exit (ray.kill), which Ray does not report as a crash
                    ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
                    return

        def node(self) -> str:
            import ray

            return ray.get_runtime_context().get_node_id()

        def load_time(self) -> float:
            """Seconds from the actor's constructor to a loaded model (imports included)."""
            return self.load_seconds

        def score(
            self, chunk: list[tuple[str, str, bool]], with_hidden: bool, tagger=None
        ) -> tuple[object, dict, dict]:
            """Token scores of ``chunk`` as Arrow; with a ``tagger`` head its label probabilities from the same
            pass (hidden states never leave), else the states themselves when ``with_hidden``."""
            from curation.core.warehouse import token_scores_frame

            self.busy = True
            try:
                started = time.perf_counter()
                with_hidden = with_hidden or tagger is not None
                scored = self.scorer.score_texts([text for _, text, _ in chunk], with_hidden=with_hidden)
                new = [(sha, s) for (sha, _, needs), s in zip(chunk, scored, strict=True) if needs]
                frame = token_scores_frame(self.scorer.model_key, [sha for sha, _ in new], [s for _, s in new])
                shas = [sha for sha, _, _ in chunk]
                if tagger is not None:
                    out = {"probs": list(zip(shas, tagger.predict_many([s.hidden for s in scored]), strict=True))}
                elif with_hidden:
                    out = {"hidden": [(sha, s.hidden) for sha, s in zip(shas, scored, strict=True)]}
                else:
                    out = {}
                stats = {"tokens": int(sum(s.n_tokens for s in scored)), "seconds": time.perf_counter() - started}
                return frame.to_arrow(), out, stats
            finally:
                self.busy = False
                self.last_used = time.monotonic()

    return ScoringActor


def pool_key(scoring: ScoringConfig, config: EngineConfig) -> str:
    """What a kept actor must share with the run that reuses it: the scoring settings, the actor's shape and
    the code it runs (a changed library starts new actors instead of scoring with the old one)."""
    import hashlib
    import json
    from pathlib import Path

    digest = hashlib.sha256()
    shape = [asdict(scoring), config.num_cpus, config.num_gpus, sorted(config.resources)]
    digest.update(json.dumps(shape, sort_keys=True, default=str).encode())
    library = Path(__file__).resolve().parent.parent
    for module in ("score/scorer", "score/executor", "tagger/model", "core/warehouse", "score/windows"):
        digest.update((library / f"{module}.py").read_bytes())
    return digest.hexdigest()[:16]


def connect(config: EngineConfig) -> None:
    """Join the cluster (or start a private one when ``address`` is empty); a clear error if unreachable."""
    import ray

    if ray.is_initialized():
        wanted = config.address if config.address not in ("", "auto") else None
        if wanted is None or ray.get_runtime_context().gcs_address == wanted:
            return
        ray.shutdown()  # this process last joined another cluster (a long-lived process, a test session)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = config.address or None
    try:
        ray.init(
            address=address,
            namespace="curation",
            log_to_driver=False,
            include_dashboard=False,
            configure_logging=False,
            # the library is on every node's path (same image): ship no working directory
            runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}},
        )
    except (ConnectionError, RuntimeError, TimeoutError) as exc:
        raise EngineError(
            f"engine.kind ray: cannot reach the Ray cluster at {config.address or '(a new local one)'}: {exc}. "
            "Start it (`ray start --head`), set engine.address to its GCS address (host:port), "
            "or set engine.kind: local"
        ) from exc


def _resources(config: EngineConfig) -> dict[str, float]:
    out = {}
    for entry in config.resources:
        name, _, amount = str(entry).partition("=")
        out[name.strip()] = float(amount or 1)
    return out


STARTUP_GRACE_S = 30.0


def _alive(name: str) -> bool:
    """Whether a kept actor of that name is up on the cluster."""
    import ray

    try:
        ray.get_actor(name, namespace="curation")
    except ValueError:
        return False
    return True


def started_actors(actors: list, timeout_s: float) -> list:
    """The actors that came up (model loaded) within ``timeout_s``; the others are killed: a cluster with
    room for fewer actors than asked still scores, with those it could start."""
    import ray

    pings = {actor.node.remote(): actor for actor in actors}
    ready, rest = ray.wait(list(pings), num_returns=1, timeout=timeout_s)
    if ready and rest:  # the others load the same model: a short grace after the first, not the whole timeout
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=STARTUP_GRACE_S)
        ready += more
    up = []
    for ref, actor in pings.items():
        if ref in ready:
            try:
                ray.get(ref)
                up.append(actor)
                continue
            except Exception:  # died while starting
                pass
        ray.kill(actor)
    if not up:
        raise EngineError(
            f"no scoring actor could start on the Ray cluster within {timeout_s:.0f} s (asked for "
            f"{len(actors)}): the cluster has no room for one (engine.num_cpus / num_gpus / resources) or the "
            "model fails to load there; the chunks already scored are kept"
        )
    return up


def score_on_ray(
    config: EngineConfig,
    scoring: ScoringConfig,
    chunks: Sequence[list[tuple[str, str, bool]]],
    write: Callable[[object, dict], None],
    with_hidden: bool = False,
    progress: Callable[[str], None] | None = None,
    tagger=None,
) -> dict:
    """Score ``chunks`` on a pool of Ray actors; ``write(arrow_table, extras)`` is called in this process
    for each chunk as it comes back (the single writer); ``extras`` holds ``probs`` [(sha, label
    probabilities)] when a ``tagger`` head ran in the actors' pass, else ``hidden`` [(sha, states)] when
    asked for (the labeled sets, whose states train the head). Returns counters for the stage summary."""
    import ray
    from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

    if not chunks:
        return {"engine": "ray", "chunks": 0, "actors": 0, "resubmitted": 0}
    begun = time.perf_counter()
    connect(config)
    connected = time.perf_counter()
    actor_class = _actor_class()
    options = {"num_cpus": config.num_cpus, "num_gpus": config.num_gpus, "max_restarts": 0}
    if config.resources:
        options["resources"] = _resources(config)
    keep = config.keep_actors_s > 0
    key = pool_key(scoring, config) if keep else ""
    if keep:
        # An idle kept actor must not hold CPUs: the detection tasks (and anything else on the cluster)
        # would wait for them until the actor times out. Kept actors reserve none and are spread over
        # the nodes instead; their calls still run `num_cpus` threads. GPUs stay reserved.
        options.update({"num_cpus": 0, "scheduling_strategy": "SPREAD"})
    flat = [item for chunk in chunks for item in chunk]
    size = max(1, config.chunk_docs)
    chunks = [flat[i : i + size] for i in range(0, len(flat), size)]
    n_actors = max(1, min(config.actors, len(chunks)))
    threads = max(1, int(config.num_cpus))

    def new_actor(index: int):
        if not keep:
            return actor_class.options(**options).remote(asdict(scoring), threads)
        named = {"name": f"curation-scorer-{key}-{index}", "lifetime": "detached", "get_if_exists": True}
        return actor_class.options(**options, **named).remote(asdict(scoring), threads, config.keep_actors_s)

    reused = sum(_alive(f"curation-scorer-{key}-{i}") for i in range(n_actors)) if keep else 0
    idle = started_actors([new_actor(i) for i in range(n_actors)], config.actor_start_timeout_s)
    n_actors = len(idle)
    ready_at = time.perf_counter()
    load_seconds = max(ray.get([actor.load_time.remote() for actor in idle]))
    head = ray.put(tagger) if tagger is not None else None  # shipped once per run, resolved in each call
    pending = deque(range(len(chunks)))
    attempts = [0] * len(chunks)
    inflight: dict = {}
    done_tokens = done_chunks = resubmitted = 0
    started = last = time.monotonic()
    while pending or inflight:
        while idle and pending:
            actor, index = idle.pop(), pending.popleft()
            attempts[index] += 1
            inflight[actor.score.remote(list(chunks[index]), with_hidden, head)] = (actor, index)
        ready, _ = ray.wait(list(inflight), num_returns=1, timeout=30.0)
        for ref in ready:
            actor, index = inflight.pop(ref)
            try:
                table, hidden, stats = ray.get(ref)
            except (RayActorError, ActorDiedError, ActorUnavailableError) as exc:
                if attempts[index] > config.max_chunk_retries:
                    raise EngineError(
                        f"chunk {index + 1} of {len(chunks)} failed {attempts[index]} times on the Ray cluster "
                        f"(last: {type(exc).__name__}); the chunks already scored are kept, rerun to score the rest"
                    ) from exc
                resubmitted += 1
                pending.appendleft(index)
                if progress:
                    progress(f"scoring on ray: an actor died ({type(exc).__name__}); chunk {index + 1} resubmitted")
                if not idle and not inflight:  # every actor gone: start one wherever the cluster has room
                    idle = started_actors([new_actor(0)], config.actor_start_timeout_s)
                continue
            write(table, hidden)  # the chunk's extras: tag probabilities or hidden states
            idle.append(actor)
            done_chunks += 1
            done_tokens += stats["tokens"]
            now = time.monotonic()
            if progress and (now - last >= 10.0 or done_chunks == len(chunks)):
                last = now
                rate = done_tokens / max(now - started, 1e-9)
                progress(
                    f"scoring on ray: {done_chunks}/{len(chunks)} chunks, {done_tokens:,} tokens, {rate:.0f} tokens/s, "
                    f"{n_actors} actors"
                )
    if not keep:
        for actor in idle:
            ray.kill(actor)
    finished = time.perf_counter()
    return {
        "engine": "ray",
        "chunks": len(chunks),
        "actors": n_actors,
        "resubmitted": resubmitted,
        "actors_reused": reused,
        "tagger_in_pass": tagger is not None,
        # where the engine's time goes: joining the cluster, actors up (process, imports, model), chunks
        "connect_seconds": round(connected - begun, 2),
        "actors_ready_seconds": round(ready_at - connected, 2),
        "actor_model_load_seconds": round(load_seconds, 2),
        "chunks_seconds": round(finished - ready_at, 2),
    }


def _detect_batch(settings, texts: list[str], kinds: list[str]) -> list:
    """One detector call on a Ray worker; the suite is built once per worker process and reused."""
    from curation.detect.suite import suite_for_settings

    return suite_for_settings(settings).detect(texts, kinds)


def detect_on_ray(config: EngineConfig, settings, batches: Sequence[tuple[list[str], list[str]]]) -> list[list]:
    """Spans per text of each (texts, kinds) batch, as Ray tasks (retried by Ray when a node is lost)."""
    import ray

    connect(config)
    task = ray.remote(num_cpus=config.num_cpus, max_retries=config.max_chunk_retries)(_detect_batch)
    options = {"resources": _resources(config)} if config.resources else {}
    refs = [task.options(**options).remote(settings, texts, kinds) for texts, kinds in batches]
    return ray.get(refs)
