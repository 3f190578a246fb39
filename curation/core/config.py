"""Run configuration: one YAML file, validated once at the edge with errors that name the key."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from curation.ingest.inbox import find_batch
from curation.score.scorer import ScoringConfig
from curation.views.rewriting import RewriteConfig


def bundled(name: str) -> Path:
    """Path of a file shipped in ``curation/data``."""
    return Path(__file__).resolve().parent.parent / "data" / name


# Bundled public labeled sets (MIT, attribution in curation/data/public/README.md): (domain, file)
PUBLIC_SETS = (("synthetic_pii", "presidio_synth.jsonl"), ("court", "tab_echr.jsonl"))


@dataclass(frozen=True)
class CalibrationConfig:
    # f1 | f2 | recall_at_budget (the most recall whose collateral's 95% upper bound over documents is within
    # collateral_budget); max_f1 (= f1), max_tpr_at_fpr and min_fpr_at_tpr are accepted too
    objective: str = "f1"
    collateral_budget: float = 0.03
    coverage_target: float = 0.9
    policies: tuple[str, ...] = ("detectors", "surprise", "union", "residual")
    heldout_fraction: float = 0.3
    seed: int = 13
    min_kind_docs: int = 20


@dataclass(frozen=True)
class MaskingConfig:
    # batch: a value masked anywhere is masked everywhere in the delivery (what the leak gate checks)
    propagation_scope: str = "batch"  # document | scope | batch
    min_propagation_chars: int = 4
    # Labels that arrive with the input are the supplier's own knowledge of private values: mask them
    # too (like a per-delivery deny list). The card reports the automatic recall on them separately.
    mask_supplied_labels: bool = True
    # Every capitalized mention of a masked person's first name or surname in the same scope is masked
    # with it (a name tagged ORGANIZATION/LOCATION counts when the scope shows it is a person).
    name_variants: bool = True


@dataclass(frozen=True)
class DetectorSettings:
    deny_list: tuple[str, ...] = ()
    allow_list: tuple[str, ...] = ()
    score_threshold: float | None = None
    use_credsweeper: bool | None = None
    # the batch's language code, resolved when the config loads from the top-level `language`, `languages`
    # or the domain's labeled set (CurationConfig.batch_language); what the detector suite is built for
    language: str | None = None


@dataclass(frozen=True)
class TaggerSettings:
    """The learned tagger (a head over the reference model's hidden states) and the labeled sets it
    learns from. ``domain`` names the domain of the configured validation set and of the batch: the
    tagger threshold and the detector combination are chosen for it."""

    enabled: bool = True
    domain: str = "support"
    # more labeled sets as "domain=path" (JSONL): the tagger trains on them, the card reports them per domain
    labeled_sets: tuple[str, ...] = ()
    public_sets: bool = True  # also train on the bundled public labeled sets (presidio synth, TAB; MIT)
    encoder: str = "bigru"  # "bigru" (reads the whole text both ways) or "window" (tokens t..t+2)
    epochs: int = 20
    hidden: int = 128
    # the labeled sets' hidden states (kept to retrain the head without re-scoring), in the private state
    # folder: at most this much, none older; corpus texts' states are deleted as soon as they are tagged
    hidden_cache_max_mb: int = 2048
    hidden_cache_max_days: float = 30.0
    # mention-swap augmentation (curation.labels.augment): this many variants of each labeled calibration
    # text (people, places, organisations, e-mails swapped from the surrogate pools) join the tagger's training
    augment_variants: int = 0
    # a tagger threshold of its own for each label with >= 30 gold spans in a domain's calibration part, where
    # it adds F1 there (chosen on out-of-fold probabilities); other labels keep the domain's threshold.
    # Measured on the four dev halves (docs/evaluation.md): social_dev +0.007 F1, the others unchanged
    label_thresholds: bool = True


@dataclass(frozen=True)
class SurrogateConfig:
    convention: str | None = None  # YAML path; None = bundled default convention
    key_env: str = "CURATION_HMAC_KEY"
    key_file: str | None = None
    allow_dev_key: bool = True  # make run / tests: generate a clearly marked dev key


@dataclass(frozen=True)
class GateConfig:
    masked_fraction_min: float = 0.005
    masked_fraction_max: float = 0.6
    residual_budget: float = 0.05
    audit_sample: int = 200
    confidence: float = 0.95
    min_auroc: float = 0.55
    drift_max_psi: float = 0.25  # population stability index of token surprise vs the calibration data (warns)
    # Below this many tokens PSI is noise: over 33 bins a batch drawn from the calibration data itself has an
    # expected PSI of about 32 / tokens (0.016 at 2,000, 0.26 at 121), so drift is reported as not judged.
    drift_min_tokens: int = 2000
    collateral_budget: float = 0.05
    coverage_goal: float = 0.8
    seed: int = 7
    # calibration_coverage: a batch's domain needs labeled held-out data of its own, this much of it; below
    # it (or calibrated on another domain) the check warns, and blocks the release when required
    require_domain_labels: bool = False
    min_domain_heldout_docs: int = 20
    min_domain_target_chars: int = 500


@dataclass(frozen=True)
class ReleaseConfig:
    views: tuple[str, ...] = ("surrogate", "redacted")
    include_training_view: bool = False
    contact: str = "privacy@example.org"
    license: str = "other"
    pretty_name: str = "curation release"


@dataclass(frozen=True)
class ShardingConfig:
    """How a batch's scoring splits into parallel Dagster steps (`curation/score/shards.py`): `workers` shards,
    each its own process and model copy, each holding one slot of the `reference_model` pool (raise that
    pool's limit to `workers` for them to run at once). 1 = one scoring step, the measured best on a
    2-core machine; on a GPU node or a cluster, one per model replica.

    `in_process_max_docs`: a `curation run` of a batch with at most this many documents runs every step in
    the run's own process (Dagster's in-process executor: the same assets and checks, no fork server to
    start), which is most of a small batch's wall time; 0 turns it off."""

    workers: int = 1
    in_process_max_docs: int = 64


ENGINES = ("local", "ray")


@dataclass(frozen=True)
class EngineConfig:
    """``kind: local`` (default) runs the model in the step's process; ``kind: ray`` on the cluster at
    ``address`` (``auto`` = the one this machine belongs to; empty = a private local cluster)."""

    kind: str = "local"
    address: str = "auto"
    actors: int = 2  # model actors (replicas); one per GPU on a GPU cluster
    num_cpus: float = 1.0  # per actor (also its scorer's calls side by side)
    num_gpus: float = 0.0  # per actor; scoring.device auto then picks the GPU inside the actor
    resources: tuple[str, ...] = ()  # custom resources per actor, "name=amount" (pin actors to node groups)
    chunk_docs: int = 16  # texts per actor call (scores do not depend on it: every model call's shape is fixed)
    max_chunk_retries: int = 3  # resubmissions of a chunk whose actor died
    actor_start_timeout_s: float = 180.0  # actors not up by then (no room on the cluster) are not used
    # Seconds the model actors stay up, idle, after a run (named, detached; the next batch with the same
    # model, code and actor shape reuses them and pays no process start or model load); 0 = killed at the end.
    # Kept actors reserve no CPUs (an idle one would starve the detection tasks), only GPUs
    keep_actors_s: float = 0.0


@dataclass(frozen=True)
class CurationConfig:
    """Everything a run needs. Relative paths resolve against ``base_dir``."""

    base_dir: str = "."
    warehouse: str = ".curation/warehouse.duckdb"
    vault: str = ".curation/vault.duckdb"
    releases_dir: str = "releases"
    input: str | None = None  # None = bundled sample corpus
    validation: str | None = None  # None = bundled labeled validation set
    # The batch's domain (None = tagger.domain). A batch of domain D calibrates on D's own labeled set when
    # one is registered (tagger.labeled_sets "D=path", or a bundled public set of D), else on `validation`,
    # and its card and `calibration_coverage` check then say that D's collateral and recall are unverified.
    domain: str | None = None
    # The domain of the `validation` file (None = tagger.domain): what the calibration was measured on.
    validation_domain: str | None = None
    # YAML source label -> convention label for labeled files in a vocabulary of one's own, on top of the
    # bundled map (TAB, presidio-research, CredData); applies to the validation set, tagger.labeled_sets and
    # the labels that arrive with the input. None = the bundled map alone.
    label_map: str | None = None
    # The batch's language ("en", "es"; curation.core.languages): its NER model, rule families and surrogate
    # name pools. None: the batch domain's entry in `languages` (domain -> code), else the language its
    # labeled set's records state or are written in, else English.
    language: str | None = None
    languages: dict[str, str] = field(default_factory=dict)
    batch_id: str = "sample"
    inbox: str = "inbox"  # one file or folder per delivery batch (watched by the inbox sensor)
    inbox_settle_seconds: float = 30.0  # an entry unchanged this long (or with a _READY marker) is complete
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    masking: MaskingConfig = field(default_factory=MaskingConfig)
    detectors: DetectorSettings = field(default_factory=DetectorSettings)
    surrogates: SurrogateConfig = field(default_factory=SurrogateConfig)
    gates: GateConfig = field(default_factory=GateConfig)
    release: ReleaseConfig = field(default_factory=ReleaseConfig)
    rewriting: RewriteConfig = field(default_factory=RewriteConfig)  # optional LM rewriting, off by default
    tagger: TaggerSettings = field(default_factory=TaggerSettings)
    sharding: ShardingConfig = field(default_factory=ShardingConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)  # local, or a Ray cluster for the model pass

    def path(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else Path(self.base_dir) / p

    @property
    def warehouse_path(self) -> Path:
        return self.path(self.warehouse)

    @property
    def vault_path(self) -> Path:
        return self.path(self.vault)

    @property
    def releases_path(self) -> Path:
        return self.path(self.releases_dir)

    @property
    def input_path(self) -> Path:
        return self.path(self.input) if self.input else bundled("sample_corpus.jsonl")

    @property
    def validation_path(self) -> Path:
        return self.path(self.validation) if self.validation else bundled("validation.jsonl")

    @property
    def calibration_domain(self) -> str:
        """The domain of the labeled set this config calibrates on."""
        return self.validation_domain or self.tagger.domain

    @property
    def batch_domain(self) -> str:
        return self.domain or self.tagger.domain

    def domain_sets(self, domain: str) -> list[Path]:
        """The labeled sets registered for ``domain`` (the user's first, then a bundled public set)."""
        return [path for d, path in self.registered_sets() if d == domain]

    def for_domain(self, domain: str) -> CurationConfig:
        """This config for a batch of ``domain``: calibrated on that domain's own labeled set when one is
        registered (it becomes the validation set, split into calibration and held-out parts), else on the
        configured validation set, whose domain is kept as the calibration domain."""
        own = self.domain_sets(domain)
        if domain == self.calibration_domain or not own:
            calibration_domain = self.calibration_domain
            validation = self.validation
        else:
            calibration_domain, validation = domain, str(own[0])
        config = dataclasses.replace(
            self,
            domain=domain,
            validation=validation,
            validation_domain=calibration_domain,
            tagger=dataclasses.replace(self.tagger, domain=domain),
        )
        return config.with_batch_language()

    @property
    def batch_language(self) -> str:
        """The batch's language: `language`, else its domain's entry in `languages`, else another language
        than English that the batch's input (a JSON-lines file) states or is written in (a new corpus nobody
        labeled: Spanish text must not meet English NER), else the language of the domain's own labeled set
        (stated by its records or detected from them), else English."""
        from curation.core.languages import DEFAULT_LANGUAGE, get_language, language_of_file

        if self.language:
            return get_language(self.language).code
        if self.batch_domain in self.languages:
            return get_language(self.languages[self.batch_domain]).code
        batch = self.input_path
        if batch.is_file() and batch.suffix.lower() in (".jsonl", ".ndjson"):
            found = language_of_file(batch)
            if found != DEFAULT_LANGUAGE:
                return found
        own = self.domain_sets(self.batch_domain)
        return language_of_file(own[0]) if own and own[0].is_file() else DEFAULT_LANGUAGE

    def with_batch_language(self) -> CurationConfig:
        """This config with the batch's language resolved into the detector settings (what a Dagster step
        and a Ray worker build their detector suite from)."""
        return dataclasses.replace(self, detectors=dataclasses.replace(self.detectors, language=self.batch_language))

    @property
    def label_map_path(self) -> Path | None:
        return self.path(self.label_map) if self.label_map else None

    def label_table(self) -> dict[str, str] | None:
        """The label map labeled data is read with: the bundled one (None), or it with `label_map` on top."""
        from curation.labels.label_map import load_label_map

        return load_label_map(self.label_map_path) if self.label_map_path else None

    def tagger_sets(self) -> list[tuple[str, Path]]:
        """(domain, path) of the labeled sets the tagger trains on besides the validation set (registered
        sets; the one serving as validation set is read once, as the validation set)."""
        return [(d, p) for d, p in self.registered_sets() if p.resolve() != self.validation_path.resolve()]

    def registered_sets(self) -> list[tuple[str, Path]]:
        """(domain, path) of every labeled set in the config: tagger.labeled_sets, then the public ones."""
        out = [
            (domain.strip(), self.path(path.strip()))
            for domain, _, path in (str(e).partition("=") for e in self.tagger.labeled_sets)
        ]
        if self.tagger.public_sets:
            out += [(domain, bundled(f"public/{name}")) for domain, name in PUBLIC_SETS]
        return out

    @property
    def inbox_path(self) -> Path:
        return self.path(self.inbox)

    def for_batch(self, batch_id: str) -> CurationConfig:
        """This config for one delivery batch: the configured input for the configured batch id, else the
        inbox entry named `batch_id`."""
        if batch_id == self.batch_id:
            return self
        found = find_batch(self.inbox_path, batch_id, self.known_domains())
        if found is None:
            raise ConfigError(
                f"delivery batch {batch_id!r} is neither the configured batch_id ({self.batch_id!r}) nor an entry of "
                f"the inbox folder {self.inbox_path.resolve()}: add {batch_id}.jsonl (or .parquet/.csv, or a folder "
                f"{batch_id}/) there"
            )
        config = dataclasses.replace(self, batch_id=batch_id, input=str(found.path.resolve()))
        return config.for_domain(found.domain) if found.domain else config.with_batch_language()

    def known_domains(self) -> list[str]:
        """Domains this config has labels for or names (inbox folders of these names hold their batches)."""
        names = [self.batch_domain, self.calibration_domain, *(d for d, _ in self.registered_sets())]
        return list(dict.fromkeys(names))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True, default=str).encode()).hexdigest()[:12]


class ConfigError(ValueError):
    """A configuration problem, naming the file and key."""


_SECTIONS = {
    "scoring": ScoringConfig,
    "calibration": CalibrationConfig,
    "masking": MaskingConfig,
    "detectors": DetectorSettings,
    "surrogates": SurrogateConfig,
    "gates": GateConfig,
    "release": ReleaseConfig,
    "rewriting": RewriteConfig,
    "tagger": TaggerSettings,
    "sharding": ShardingConfig,
    "engine": EngineConfig,
}


def load_config(path: str | Path | None = None, **overrides: Any) -> CurationConfig:
    """Read a YAML config (or defaults) and apply keyword overrides of top-level keys."""
    data: dict[str, Any] = {}
    where = "<defaults>"
    if path is not None:
        where = str(path)
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except FileNotFoundError as exc:
            raise ConfigError(f"{where}: config file not found") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"{where}: not valid YAML ({exc})") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: top level must be a mapping of settings")
        data.setdefault("base_dir", str(Path(path).resolve().parent))
    data.update({k: v for k, v in overrides.items() if v is not None})
    return config_from_dict(data, where)


def config_from_dict(data: dict[str, Any], where: str = "<dict>") -> CurationConfig:
    top_fields = {f.name for f in dataclasses.fields(CurationConfig)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in top_fields:
            raise ConfigError(
                f"{where}: unknown setting {key!r}{_did_you_mean(key, top_fields)}; known settings: "
                f"{sorted(top_fields)}"
            )
        if key in _SECTIONS:
            kwargs[key] = _section(_SECTIONS[key], value, f"{where}: {key}")
        else:
            kwargs[key] = value
    if "languages" in kwargs:
        kwargs["languages"] = _languages(kwargs["languages"], where)
    config = CurationConfig(**kwargs)
    if config.language:
        try:
            config.batch_language  # noqa: B018 - validates the code
        except ValueError as exc:
            raise ConfigError(f"{where}: language: {exc}") from None
    config = config.for_domain(config.domain) if config.domain else config.with_batch_language()
    _check(config, where)
    return config


def _languages(value: Any, where: str) -> dict[str, str]:
    from curation.core.languages import LanguageError, get_language

    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: languages: must be a mapping of domain -> language code, e.g. {{clinical_es: es}}")
    try:
        return {str(domain): get_language(str(code)).code for domain, code in value.items()}
    except LanguageError as exc:
        raise ConfigError(f"{where}: languages: {exc}") from None


def _section(cls: type, value: Any, where: str) -> Any:
    if value is None:
        return cls()
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(value).__name__}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(value) - set(names)
    if unknown:
        guess = _did_you_mean(sorted(unknown)[0], set(names))
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}{guess}; allowed: {sorted(names)}")
    cleaned = {k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}
    try:
        return cls(**cleaned)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _check(config: CurationConfig, where: str) -> None:
    from curation.policy.calibration import OBJECTIVES, POLICIES
    from curation.policy.masking import PROPAGATION_SCOPES

    problems = []
    if config.calibration.objective not in OBJECTIVES:
        problems.append(f"calibration.objective must be one of {OBJECTIVES}")
    bad = set(config.calibration.policies) - set(POLICIES)
    if bad or not config.calibration.policies:
        problems.append(f"calibration.policies must be a non-empty subset of {POLICIES}")
    if config.masking.propagation_scope not in PROPAGATION_SCOPES:
        problems.append(f"masking.propagation_scope must be one of {PROPAGATION_SCOPES}")
    if config.engine.kind not in ENGINES:
        problems.append(f"engine.kind must be one of {list(ENGINES)}, got {config.engine.kind!r}")
    if not 0 < config.calibration.heldout_fraction < 1:
        problems.append("calibration.heldout_fraction must be between 0 and 1")
    bad_views = set(config.release.views) - {"surrogate", "redacted"}
    if bad_views or not config.release.views:
        problems.append("release.views must be a non-empty subset of ['surrogate', 'redacted']")
    gates = config.gates
    if not 0 <= gates.masked_fraction_min < gates.masked_fraction_max <= 1:
        problems.append(
            "gates: need 0 <= masked_fraction_min < masked_fraction_max <= 1, got "
            f"masked_fraction_min={gates.masked_fraction_min}, masked_fraction_max={gates.masked_fraction_max}"
        )
    problems += _check_labeled_sets(config)
    problems += _check_label_map(config)
    if not isinstance(config.sharding.workers, int) or config.sharding.workers < 1:
        problems.append(f"sharding.workers must be a whole number >= 1, got {config.sharding.workers!r}")
    from curation.tagger.model import ENCODERS

    if config.tagger.augment_variants < 0:
        problems.append(f"tagger.augment_variants must be >= 0, got {config.tagger.augment_variants}")
    if config.tagger.encoder not in ENCODERS:
        problems.append(f"tagger.encoder must be one of {list(ENCODERS)}, got {config.tagger.encoder!r}")
    if problems:
        raise ConfigError(f"{where}: " + "; ".join(problems))


def _check_labeled_sets(config: CurationConfig) -> list[str]:
    problems = []
    for entry in config.tagger.labeled_sets:
        domain, sep, path = str(entry).partition("=")
        if not sep or not domain.strip() or not path.strip():
            problems.append(f"tagger.labeled_sets entry {entry!r} must be 'domain=path/to/labeled.jsonl'")
        elif not config.path(path.strip()).is_file():
            problems.append(f"tagger.labeled_sets: {config.path(path.strip())} (domain {domain!r}) is not a file")
    return problems


def _check_label_map(config: CurationConfig) -> list[str]:
    from curation.labels.label_map import LabelMapError

    if config.label_map is None:
        return []
    if not isinstance(config.label_map, str) or not config.label_map.strip():
        return [f"label_map must be the path of a YAML file, got {config.label_map!r}"]
    path = config.label_map_path
    if not path.is_file():
        return [f"label_map: {path} is not a file"]
    try:
        config.label_table()
    except LabelMapError as exc:
        return [f"label_map: {exc}"]
    return []


def _did_you_mean(name: str, known: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
