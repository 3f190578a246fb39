"""Command line: ``curation run``, ``curation eval``, ``curation label``, ``curation audit``, ``curation leakage``,
``curation canary``.

``run`` drives the Dagster asset graph in-process; the Dagster layer lives in the repository
(``definitions.py``), so it is imported lazily from the project folder, never from this library.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

# calibration.objective's values (policy.calibration.OBJECTIVES; a test keeps the two equal), listed here so
# building the parser imports nothing heavy
OBJECTIVE_CHOICES = ("f1", "f2", "recall_at_budget", "max_f1", "max_tpr_at_fpr", "min_fpr_at_tpr")

if TYPE_CHECKING:
    from curation.views.vault import KeyInfo

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")


def project_root() -> Path:
    """The folder holding definitions.py: the working directory, else the source checkout."""
    for candidate in (Path.cwd(), Path(__file__).resolve().parent.parent):
        if (candidate / "definitions.py").exists():
            return candidate
    raise SystemExit(
        "curation run needs the project folder (with definitions.py, assets/, checks/, resources/): "
        "run it from the repository root"
    )


def cmd_run(args: argparse.Namespace) -> int:
    from curation.core.config import load_config

    root = project_root()
    config_path = str(Path(args.config).resolve()) if args.config else None
    overrides = {
        "base_dir": str(Path(args.out).resolve()) if args.out else (None if args.config else str(Path.cwd())),
        "input": str(Path(args.input).resolve()) if args.input else None,
        "batch_id": args.batch_id,
        "domain": getattr(args, "domain", None),  # programmatic callers may predate --domain
        "language": getattr(args, "language", None),
    }
    config = load_config(config_path, **overrides)
    if args.batch_id and not args.input:  # a batch waiting in the inbox: run it without the sensor
        from curation.ingest.inbox import find_batch

        entry = find_batch(config.inbox_path, args.batch_id, config.known_domains())
        if entry is not None:
            overrides["input"] = str(entry.path.resolve())
            overrides["domain"] = overrides["domain"] or entry.domain
            config = load_config(config_path, **overrides)
    print(
        f"curation run: batch {config.batch_id}, domain {config.batch_domain}, language "
        f"{config.detectors.language}, input {config.input_path}",
        flush=True,
    )
    from curation.preflight import check_run_inputs
    from curation.views.vault import configured_key

    check_run_inputs(config)  # a missing/empty input or a bad labeled file: one line now, before any key exists
    key = configured_key(config)
    if key.is_dev:
        print(
            f"curation run: using a generated DEV HMAC key ({key.key_id}): not for real deliveries; "
            f"set {config.surrogates.key_env} (hex or base64, >= 16 bytes)",
            flush=True,
        )
    if config.batch_domain != config.calibration_domain:
        print(
            f"curation run: domain {config.batch_domain!r} has no labeled set: calibrated on "
            f"{config.calibration_domain!r}, so its collateral and recall are unverified "
            f"(label some with `curation label export`)",
            flush=True,
        )
    from curation.delivery.writer import remove_stale_temp_folders

    for name in remove_stale_temp_folders(config.releases_path):
        print(f"curation run: removed {config.releases_path / name}, left by a release writer that is gone", flush=True)
    started = time.perf_counter()
    up_to_date, fingerprint = check_freshness(config, root, force=getattr(args, "force", False))
    if up_to_date:
        return 0
    from curation.gates.contract_worker import ContractServer

    # great_expectations imports in its own process while Dagster loads and the run launches (docs/operations.md)
    with ContractServer():
        sys.path.insert(0, str(root))
        definitions = importlib.import_module("definitions")  # the Dagster layer, loaded from the project
        from curation.delivery.freshness import FINGERPRINT_TAG
        from resources import CurationSettings

        settings = CurationSettings(config_path=config_path, **overrides)
        tags = {FINGERPRINT_TAG: fingerprint} if fingerprint else None
        result = definitions.run_curation(settings, args.log_level, tags=tags)
    elapsed = time.perf_counter() - started
    code = report_run(result, config, elapsed)
    interrupted = getattr(result, "interrupted_by", None)
    return 128 + interrupted if interrupted else code


def check_freshness(config, root: Path, force: bool) -> tuple[bool, str | None]:
    """(True, fingerprint) when the batch's release is current (printed: nothing to run), else (False,
    the inputs' fingerprint for the run to record with its release; None when it cannot be computed)."""
    import curation
    from curation.core.warehouse import Warehouse
    from curation.delivery.freshness import batch_fingerprint, check
    from curation.delivery.writer import verify_release

    started = time.perf_counter()
    layer = [root / name for name in ("assets", "checks", "resources", "automation", "definitions.py")]
    fingerprint = batch_fingerprint(config, [Path(curation.__file__).parent, *layer])
    if fingerprint is None or force:
        return False, fingerprint
    fresh = check(Warehouse(config.warehouse_path), config.batch_id, fingerprint, verify_release)
    if not fresh.up_to_date:
        print(f"running: {fresh.reason}", flush=True)
        return False, fingerprint
    print(
        f"up to date: inputs, config, code, models and key are unchanged since release {fresh.release_id}, "
        f"which verifies; no run launched ({time.perf_counter() - started:.1f}s; --force runs anyway)\n"
        f"release: {fresh.release_path}\ncard:    {Path(fresh.release_path) / 'README.md'}"
    )
    return True, fingerprint


def report_run(result, config, elapsed: float) -> int:
    """Print stage outcomes, gate results and where the outputs are; non-zero if no release."""
    from curation.core.warehouse import Warehouse

    release_path = None
    print(f"\nstages ({elapsed:.0f}s):")
    for event in result.all_events:
        if event.event_type_value == "ASSET_MATERIALIZATION":
            mat = event.event_specific_data.materialization
            print(f"  materialized {mat.asset_key.to_user_string()}")
            if mat.asset_key.to_user_string() == "release":
                release_path = mat.metadata["path"].value
        elif event.event_type_value == "ASSET_CHECK_EVALUATION":
            ev = event.event_specific_data
            why = f": {ev.description}" if not ev.passed and getattr(ev, "description", None) else ""
            warns = getattr(getattr(ev, "severity", None), "value", None) == "WARN"
            verdict = "PASSED" if ev.passed else "WARN" if warns else "FAILED"
            print(f"  check {ev.asset_check_key.name:<26} {verdict}{why}")
        elif event.event_type_value in ("STEP_FAILURE", "STEP_SKIPPED"):
            print(f"  {event.event_type_value.lower().replace('_', ' ')}: {event.step_key}")
    counts = Warehouse(config.warehouse_path).row_counts()
    print("\nwarehouse:", config.warehouse_path)
    for table, n in counts.items():
        print(f"  {table:<24} {n}")
    if release_path:
        print(f"\nrelease: {release_path}\ncard:    {Path(release_path) / 'README.md'}")
        return 0
    print("\nno release: a gate failed or a stage failed (see above)", file=sys.stderr)
    return 1


def auditor_key(config_path: str | None = None, key_file: str | None = None) -> KeyInfo:
    """The delivery key a release's signature is checked with: ``key_file``, else the key of the auditor's
    config (its env var, else its key file; the working directory's defaults without a config). Never a
    key found through the release itself: its manifest's ``base_dir`` is the release's claim, not a trust root.
    Raises ``HmacKeyError`` (saying where it looked) when there is none; never creates one."""
    from curation.core.config import load_config
    from curation.views.vault import HmacKeyError, load_key

    if key_file:
        if not Path(key_file).is_file():
            raise HmacKeyError(f"key file {key_file} does not exist")
        return load_key(env_var="", key_file=key_file)  # an explicit file wins over the environment
    config = load_config(config_path, base_dir=None if config_path else str(Path.cwd()))
    settings = config.surrogates
    path = config.path(settings.key_file) if settings.key_file else config.path(".curation/dev-hmac.key")
    if not os.environ.get(settings.key_env) and not path.is_file():
        raise HmacKeyError(
            f"no delivery key to verify the manifest signature with: set {settings.key_env}, or pass --key-file, "
            f"or --config of the project that made the release (looked for {path})"
        )
    return load_key(env_var=settings.key_env, key_file=path, create_dev_key=False)


def cmd_audit(args: argparse.Namespace) -> int:
    """Re-verify a release: its signature and checksums, recorded gates and, with its warehouse, a fresh
    leak scan."""
    from curation.delivery.writer import verify_release
    from curation.views.vault import HmacKeyError

    release = Path(args.release_dir)
    if not release.is_dir():
        problems = verify_release(release)
    else:
        try:
            problems = verify_release(release, auditor_key(args.config, args.key_file))
        except HmacKeyError as exc:  # an unverifiable signature fails the audit, it is not skipped
            problems = [*verify_release(release), f"manifest signature not verified: {exc}"]
    manifest = json.loads((release / "manifest.json").read_text()) if not problems else {}
    gates = manifest.get("gates", {})
    failed = [name for name, gate in gates.items() if not (gate.get("passed") if isinstance(gate, dict) else gate)]
    problems += [f"gate {name} recorded as failed" for name in failed]
    warehouse_path = Path(args.warehouse) if args.warehouse else None
    if warehouse_path is None and manifest:
        config = manifest.get("config", {})
        candidate = Path(config.get("base_dir", ".")) / config.get("warehouse", "")
        warehouse_path = candidate if candidate.is_file() else None
    if manifest and warehouse_path:
        problems += rescan_release(release, manifest, warehouse_path)
    elif manifest:
        print("note: no warehouse found; checked checksums and recorded gates only (pass --warehouse to re-scan)")
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        key_id = manifest.get("signature", {}).get("key_id")
        gates_passed = len(manifest.get("gates", {}))
        print(f"OK {release}: signature (key {key_id}) and checksums verify, {gates_passed} recorded gates passed")
    return 1 if problems else 0


def rescan_release(release: Path, manifest: dict, warehouse_path: Path) -> list[str]:
    """The shipped text must equal the audited views, and a fresh leak scan must find nothing."""
    import duckdb

    from curation.core.warehouse import Warehouse
    from curation.gates import release_gates as gates

    warehouse = Warehouse(warehouse_path)
    problems = []
    for batch in manifest.get("batch_ids", []):
        public_to_doc = release_id_map(manifest, batch)
        for table, view in (("surrogate", "surrogate_view"), ("redacted", "redacted_view")):
            if table not in manifest.get("tables", {}):
                continue
            rows = duckdb.sql(f"SELECT doc_id, text FROM read_parquet('{release}/data/{table}/*.parquet')").fetchall()
            audited = dict(warehouse.query(f"SELECT doc_id, text FROM {view} WHERE batch_id = ?", [batch]).iter_rows())
            if public_to_doc is None:  # no vault: the texts must still be the audited ones
                same = sorted(text for _, text in rows) == sorted(audited.values())
            else:
                same = {public_to_doc.get(public, f"unmapped:{public}"): text for public, text in rows} == audited
            if not same:
                problems.append(f"{table}: shipped text differs from the audited {view} of batch {batch}")
        result = gates.residual_leak_scan(warehouse, batch, None, "cli-audit")
        if not result.passed:
            problems.append(f"residual leak scan of batch {batch}: {result.detail.get('findings')} findings")
        else:
            print(f"re-scan of batch {batch}: {result.detail['values_checked']} known values, 0 findings")
    return problems


def release_id_map(manifest: dict, batch: str) -> dict[str, str] | None:
    """Public doc id -> warehouse doc id of a released batch, from the vault recorded in the manifest
    (releases carry only public ids); None when that vault is not here."""
    from curation.views.vault import Vault

    config = manifest.get("config", {})
    vault_path = Path(config.get("base_dir", ".")) / config.get("vault", "")
    if not config.get("vault") or not vault_path.is_file():
        print(f"note: vault {vault_path} not found; comparing released texts without their ids")
        return None
    with Vault(vault_path) as vault:
        return vault.release_ids(batch)


def add_tagger_training_options(parser: argparse.ArgumentParser) -> None:
    """What the tagger of `curation eval` and `curation label export` trains on, and how it is decoded."""
    parser.add_argument(
        "--no-public-sets", action="store_true", help="train the tagger on --calibrate-on only (not the bundled sets)"
    )
    parser.add_argument(
        "--train-on",
        action="append",
        help="labeled JSONL the tagger trains on instead of the --calibrate-on sets, as PATH or DOMAIN=PATH "
        "(repeatable; plus the bundled public sets): --calibrate-on then only calibrates, in seconds, with "
        "the tagger's threshold chosen on texts it never saw",
    )
    parser.add_argument(
        "--augment",
        type=int,
        default=0,
        metavar="N",
        help="mention-swap augmentation: N variants of each labeled training text (up to 4,000 characters) with "
        "its people, places, organisations and e-mails replaced from the surrogate pools (default 0: off)",
    )
    parser.add_argument(
        "--no-label-thresholds",
        dest="label_thresholds",
        action="store_false",
        help="every label at the domain's tagger threshold (default: a label with >= 30 gold spans in the "
        "domain's calibration labels gets its own where it adds F1 there, as tagger.label_thresholds)",
    )
    parser.add_argument(
        "--self-train-on",
        action="append",
        metavar="DOMAIN=PATH",
        help="self-training: unlabeled texts of DOMAIN (JSONL with a text field; spans ignored; repeatable), "
        "e.g. the pool labels were picked from. The tagger also trains on its confident tokens there, and is "
        "kept only where that raises its out-of-fold F1 on DOMAIN's --calibrate-on labels",
    )
    parser.add_argument(
        "--self-train-texts",
        type=int,
        default=500,
        metavar="N",
        help="at most N texts drawn (seeded) from the --self-train-on pool (default 500)",
    )


def self_training_options(args: argparse.Namespace) -> dict:
    """``--self-train-on`` / ``--self-train-texts`` as the tagger's self-training settings."""
    from curation.tagger.self_training import SelfTrainingConfig

    if args.self_train_texts < 0:
        raise SystemExit(f"curation: --self-train-texts must be >= 0, got {args.self_train_texts}")
    if not args.self_train_on:
        return {}
    return {"self_train_on": args.self_train_on, "self_training": SelfTrainingConfig(max_texts=args.self_train_texts)}


def augment_config(args: argparse.Namespace):
    """The ``--augment`` flag as the tagger's augmentation settings."""
    from curation.labels.augment import AugmentConfig

    if args.augment < 0:
        raise SystemExit(f"curation: --augment must be >= 0, got {args.augment}")
    return AugmentConfig(variants=args.augment)


def cmd_eval(args: argparse.Namespace) -> int:
    if not 0.0 <= args.collateral_budget <= 1.0:
        budget = args.collateral_budget
        print(f"curation eval: --collateral-budget must be within [0, 1], got {budget}", file=sys.stderr)
        return 2
    from curation.evaluation.gold import run_eval
    from curation.labels.label_map import load_label_map
    from curation.labels.sets import LabeledFormatError
    from curation.score.scorer import ScoringConfig

    scoring = ScoringConfig(prompt=args.prompt or "", contrast_prompt=args.contrast_prompt or "")
    try:
        label_map = load_label_map(args.label_map) if args.label_map else None  # LabelMapError is a ValueError
        metrics = run_eval(
            Path(args.gold),
            Path(args.predictions),
            Path(args.metrics),
            calibrate_on=args.calibrate_on or None,
            domain=args.domain,
            policy=args.policy,
            warehouse_path=Path(args.warehouse) if args.warehouse else None,
            scoring=scoring,
            collateral_budget=args.collateral_budget,
            objective=args.objective,
            use_tagger=not args.no_tagger,
            public_sets=not args.no_public_sets,
            label_map=label_map,
            train_on=args.train_on or None,
            augment=augment_config(args),
            label_thresholds=args.label_thresholds,
            **self_training_options(args),
        )
    except (LabeledFormatError, ValueError, FileNotFoundError) as exc:
        print(f"curation eval: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(metrics["summary"], indent=2))
    return 0


def cmd_label_export(args: argparse.Namespace) -> int:
    """Pick records worth labeling and write them as Label Studio tasks with the current predictions."""
    from curation.labels.label_map import load_label_map
    from curation.labels.loop import export_tasks
    from curation.labels.sets import LabeledFormatError

    try:
        label_map = load_label_map(args.label_map) if args.label_map else None  # LabelMapError is a ValueError
        summary = export_tasks(
            Path(args.input),
            args.n,
            Path(args.out),
            strategy=args.strategy,
            seed=args.seed,
            calibrate_on=args.calibrate_on or None,
            domain=args.domain,
            warehouse_path=Path(args.warehouse) if args.warehouse else None,
            label_map=label_map,
            public_sets=not args.no_public_sets,
            train_on=args.train_on or None,
            exclude=args.exclude or (),
            augment=augment_config(args),
            label_thresholds=args.label_thresholds,
            **self_training_options(args),
        )
    except (LabeledFormatError, ValueError, FileNotFoundError) as exc:
        print(f"curation label export: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


def cmd_label_import(args: argparse.Namespace) -> int:
    """A Label Studio JSON export as labeled JSONL: all tasks valid, or nothing written."""
    from curation.evaluation.gold import labeled_set_specs
    from curation.labels.label_map import load_label_map
    from curation.labels.loop import LabelImportError, import_export, write_labeled_private

    domain = args.domain or labeled_set_specs(args.out)[0][0]
    try:
        label_map = load_label_map(args.label_map) if args.label_map else None
        records, unlabeled = import_export(Path(args.export), domain, label_map)
    except (LabelImportError, ValueError) as exc:
        print(f"curation label import: {exc}", file=sys.stderr)
        return 2
    write_labeled_private(Path(args.out), records)
    spans = sum(len(r["spans"]) for r in records)
    note = f"; {unlabeled} task(s) without a submitted annotation skipped" if unlabeled else ""
    print(f"curation label import: {len(records)} record(s), {spans} span(s), domain {domain!r} -> {args.out}{note}")
    return 0


def add_label_parser(sub) -> None:
    label = sub.add_parser("label", help="labeling loop: export records worth labeling to Label Studio, import labels")
    steps = label.add_subparsers(dest="label_command", required=True)
    export = steps.add_parser(
        "export",
        help="pick N records worth labeling; write Label Studio tasks (with predictions) and the label config",
        description="Writes TASKS.json (Label Studio import format, the current detection as predictions) and "
        "TASKS.label_config.xml beside it, both 0600. Labels in INPUT are ignored.",
    )
    export.add_argument("input", help="JSONL / Parquet / CSV file or a folder of text/code files (as curation run)")
    export.add_argument("--n", type=int, required=True, help="how many records to pick")
    export.add_argument("--out", required=True, help="tasks file to write (TASKS.json)")
    export.add_argument(
        "--strategy",
        default="uncertainty",
        choices=["uncertainty", "targets", "random"],
        help="uncertainty (default): the records the tagger and detectors are least sure about, spread over "
        "kinds and lengths; targets: weighs how many targets the tagger expects in a record too (more names "
        "per label when the tagger retrains on them), spread in proportion to kinds and lengths; random: a "
        "seeded sample (the baseline)",
    )
    export.add_argument("--seed", type=int, default=0, help="seed of the random strategy (default 0)")
    export.add_argument(
        "--calibrate-on",
        action="append",
        help="labeled JSONL the tagger trains and calibrates on, as PATH or DOMAIN=PATH; repeat for several "
        "domains (default: bundled validation set), as for curation eval",
    )
    export.add_argument("--domain", help="which --calibrate-on domain INPUT belongs to (default: the first)")
    export.add_argument("--warehouse", help="DuckDB file caching scores (default: ~/.cache/curation/eval.duckdb)")
    add_tagger_training_options(export)
    export.add_argument(
        "--exclude",
        action="append",
        help="labeled JSONL whose records are not picked again (repeatable; the domain's --calibrate-on set is "
        "excluded too): label in rounds, each export picking with the tagger trained on what is labeled so far",
    )
    export.add_argument("--label-map", help="YAML label map for the --calibrate-on sets' labels, as for curation eval")
    export.set_defaults(func=cmd_label_export)
    imp = steps.add_parser(
        "import",
        help="a Label Studio JSON export as labeled JSONL (id, text, spans, domain)",
        description="Reads each task's latest annotation that was not cancelled (tasks without one are skipped "
        "and counted); data.doc_id becomes the record id. Every span is checked (offsets inside the text and "
        "matching the annotated text, labels through the label map; overlapping spans merge, the longest's "
        "label wins). If any task is bad, the command lists every bad task (task id: what is wrong), writes "
        "nothing and exits 2: fix them in Label Studio and export again. The output file is 0600.",
    )
    imp.add_argument("export", help="Label Studio export (JSON, from /api/projects/ID/export?exportType=JSON)")
    imp.add_argument("--out", required=True, help="labeled JSONL to write")
    imp.add_argument(
        "--domain",
        help="domain the records belong to (default: the --out file's stem, or its folder for labeled.jsonl, "
        "as --calibrate-on names it)",
    )
    imp.add_argument("--label-map", help="YAML label map for labels of a project's own config, as for curation eval")
    imp.set_defaults(func=cmd_label_import)


def cmd_leakage(args: argparse.Namespace) -> int:
    """Leakage report of a release, from the warehouse of the run that made it (rates and counts only)."""
    from curation.core.warehouse import Warehouse
    from curation.delivery.writer import verify_release
    from curation.evaluation import canary_plan, leakage

    release = Path(args.release_dir)
    problems = verify_release(release)
    if problems:
        print("\n".join(f"FAIL {p}" for p in problems), file=sys.stderr)
        return 1
    manifest = json.loads((release / "manifest.json").read_text())
    warehouse_path = Path(args.warehouse) if args.warehouse else None
    if warehouse_path is None:
        config = manifest.get("config", {})
        warehouse_path = Path(config.get("base_dir", ".")) / config.get("warehouse", "")
    if not warehouse_path.is_file():
        print(f"curation leakage: no warehouse at {warehouse_path}; pass --warehouse", file=sys.stderr)
        return 2
    shipped_differs = rescan_release(release, manifest, warehouse_path)
    if any("differs" in p for p in shipped_differs):
        print("\n".join(f"FAIL {p}" for p in shipped_differs), file=sys.stderr)
        return 1
    settings = leakage.LeakageSettings(
        inference=not args.no_inference, inference_model=args.inference_model or leakage.LeakageSettings.inference_model
    )
    warehouse = Warehouse(warehouse_path)
    reports = []
    for batch in manifest.get("batch_ids", []):
        plan = canary_plan.load_plan(warehouse, batch)
        planted, detected = (), {}
        if plan is not None:
            inputs = canary_plan.probe_inputs(warehouse, batch, plan[1], [])
            planted = [(c.kind, c.value) for c in plan[1]]
            detected = {c.value.strip(): inputs.canary_masked.get(c.canary_id) == 1.0 for c in plan[1]}
        report = leakage.leakage_report(warehouse, batch, settings, canary_values=planted, canary_detected=detected)
        print(leakage.format_report(report))
        reports.append(report)
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=2, default=str))
    worst = max((r["direct_leak_rate_detected"] or 0.0 for r in reports), default=0.0)
    print(json.dumps({"release": release.name, "direct_leak_rate_detected": worst}))
    return 0


def cmd_canary(args: argparse.Namespace) -> int:
    """Plant canaries in a corpus cut from the bundled sample, run the pipeline on it, fine-tune and measure
    (the `canary_probe` and `leakage_report` assets), then write the card and release; ends with a JSON line."""
    from curation.core.config import bundled, load_config
    from curation.core.warehouse import Warehouse, stage_summary
    from curation.evaluation import canary, canary_plan

    root = project_root()
    base = str(Path(args.out).resolve()) if args.out else str(Path.cwd())
    config_path = str(Path(args.config).resolve()) if args.config else None
    probe = canary.ProbeSettings(
        seed=args.seed,
        steps=args.steps,
        candidates=args.candidates,
        canaries_per_cell=args.canaries_per_cell,
        host_docs=args.host_docs,
        heldout_docs=args.heldout_docs,
    )
    started = time.perf_counter()
    sample = [json.loads(line) for line in bundled("sample_corpus.jsonl").read_text().splitlines() if line.strip()]
    corpus = canary.build_canary_corpus(sample, probe)
    corpus_path = canary.write_jsonl(
        Path(base) / ".curation" / "canary" / args.batch_id / "corpus.jsonl", corpus.records
    )
    overrides = {"base_dir": base, "input": str(corpus_path), "batch_id": args.batch_id}
    config = load_config(config_path, **overrides)
    canary_plan.record_plan(Warehouse(config.warehouse_path), args.batch_id, corpus, probe)
    print(
        f"curation canary: {len(corpus.canaries)} canaries x duplicates {list(probe.duplicates)} planted in "
        f"{len(corpus.records)} sample records ({len(corpus.heldout)} held out); batch {args.batch_id}",
        flush=True,
    )
    sys.path.insert(0, str(root))
    definitions = importlib.import_module("definitions")
    from resources import CurationSettings

    settings = CurationSettings(config_path=config_path, **overrides)
    views = [k for k in definitions.delivery_asset_names() if k not in ("dataset_card", "release")]
    stages = (
        ("pipeline up to the views and their gates", views),
        ("leakage report and canary probe", ["leakage_report", "canary_probe"]),
        ("dataset card and release", ["dataset_card", "release"]),
    )
    release_path = None
    for title, selection in stages:
        print(f"\n== {title} ({time.perf_counter() - started:.0f}s)", flush=True)
        result = definitions.materialize_for_batch(settings, selection, args.log_level)
        failed = [e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
        if failed:
            print(f"curation canary: steps failed: {failed}", file=sys.stderr)
            return 1
        for event in result.all_events:
            if event.event_type_value == "ASSET_MATERIALIZATION":
                mat = event.event_specific_data.materialization
                if mat.asset_key.to_user_string() == "release":
                    release_path = mat.metadata["path"].value
    warehouse = Warehouse(config.warehouse_path)
    summary = stage_summary(warehouse, args.batch_id, canary.PROBE_STAGE)
    report = stage_summary(warehouse, args.batch_id, "leakage_report")
    print("\n" + canary.format_table(summary))
    card = Path(release_path) / "README.md" if release_path else None
    print(f"\nrelease: {release_path}\ncard:    {card}")
    line = {
        **summary["metrics"],
        "direct_leak_rate_detected": report.get("direct_leak_rate_detected"),
        "canaries": summary["canaries"],
        "canaries_missed_by_detection": summary["canaries_missed_by_detection"],
        "canary_leak_rate_missed": (report.get("canaries") or {}).get("training_view", {}).get("missed"),
        "candidates": probe.candidates,
        "steps": probe.steps,
        "probe_seconds": summary["seconds"],
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(line))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="curation", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (any position)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run", help="run one delivery batch through the Dagster job; it releases only if its gates pass"
    )
    run.add_argument("--input", help="JSONL / Parquet / CSV file or a folder of text/code files")
    run.add_argument("--out", help="folder for the warehouse, vault and releases (default: here)")
    run.add_argument("--config", help="YAML config file")
    run.add_argument(
        "--domain",
        help="the batch's domain: calibrated on that domain's labeled set when one is registered "
        "(tagger.labeled_sets 'D=path'), else reported unverified (default: config `domain`, then tagger.domain)",
    )
    run.add_argument(
        "--language",
        help="the batch's language (en, es): its NER model, rule families and surrogate names (default: config "
        "`language`, then `languages` for the domain, then the language of the domain's labeled set, then en)",
    )
    run.add_argument(
        "--batch-id",
        help="delivery batch id (default from config: 'sample'); without --input, the inbox entry of that name",
    )
    run.add_argument(
        "--force", action="store_true", help="run even when the batch's release is up to date with its inputs"
    )
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    run.set_defaults(func=cmd_run)
    ev = sub.add_parser("eval", help="calibrate on labeled data, predict spans on GOLD, write metrics")
    ev.add_argument("gold")
    ev.add_argument("--predictions", required=True)
    ev.add_argument("--metrics", required=True)
    ev.add_argument(
        "--calibrate-on",
        action="append",
        help="labeled JSONL to train the tagger on and calibrate on, as PATH or DOMAIN=PATH; repeat for several "
        "domains (default: bundled validation set)",
    )
    ev.add_argument("--domain", help="which --calibrate-on domain GOLD belongs to (default: the first)")
    ev.add_argument(
        "--label-map",
        help="YAML mapping of your files' labels to the convention's (source label -> convention label), on top "
        "of the bundled map of TAB, presidio-research and CredData names",
    )
    ev.add_argument("--no-tagger", action="store_true", help="detectors and surprise only (no learned tagger)")
    add_tagger_training_options(ev)
    ev.add_argument("--policy", default="auto", choices=["detectors", "surprise", "union", "residual", "auto"])
    ev.add_argument("--prompt", help="prompted scoring: condition every text on this description")
    ev.add_argument(
        "--contrast-prompt",
        help="contrastive scoring: NLL under --prompt minus NLL under this prompt (describing unwanted content)",
    )
    ev.add_argument("--warehouse", help="DuckDB file caching scores (default: ~/.cache/curation/eval.duckdb)")
    ev.add_argument(
        "--collateral-budget",
        type=float,
        default=0.03,
        help="highest character FPR an operating point may have on the calibration data (default 0.03)",
    )
    ev.add_argument(
        "--objective",
        choices=OBJECTIVE_CHOICES,
        default="f1",
        help="what calibration maximises within the budget (calibration.objective): f1, f2, or recall_at_budget "
        "(the most recall whose collateral's 95%% upper bound over documents is within the budget)",
    )
    ev.set_defaults(func=cmd_eval)
    add_label_parser(sub)
    audit = sub.add_parser("audit", help="re-verify an existing release (checksums, recorded gates)")
    audit.add_argument("release_dir")
    audit.add_argument("--warehouse", help="warehouse DuckDB file (default: the one recorded in the manifest)")
    audit.add_argument("--config", help="YAML config whose delivery key verifies the manifest signature")
    audit.add_argument("--key-file", help="delivery key file to verify the manifest signature with")
    audit.set_defaults(func=cmd_audit)
    leak = sub.add_parser("leakage", help="leakage report of a release: direct/inference leak and retention per view")
    leak.add_argument("release_dir")
    leak.add_argument("--warehouse", help="warehouse DuckDB file (default: the one recorded in the manifest)")
    leak.add_argument("--inference-model", help="local model for the inference probe (default: the embedded one)")
    leak.add_argument("--no-inference", action="store_true", help="skip the inference-leak probe (no model)")
    leak.add_argument("--json", help="write the full report(s) to this file")
    leak.set_defaults(func=cmd_leakage)
    can = sub.add_parser("canary", help="canary memorization probe: plant, run the pipeline, fine-tune, measure")
    defaults = _probe_defaults()
    can.add_argument("--out", help="folder for the warehouse, vault and releases (default: here)")
    can.add_argument("--config", help="YAML config file")
    can.add_argument("--batch-id", default="privacy-eval")
    can.add_argument("--seed", type=int, default=defaults.seed)
    can.add_argument("--steps", type=int, default=defaults.steps, help="optimizer steps per fine-tuned variant")
    can.add_argument("--candidates", type=int, default=defaults.candidates, help="random candidates per canary")
    can.add_argument("--canaries-per-cell", type=int, default=defaults.canaries_per_cell)
    can.add_argument("--host-docs", type=int, default=defaults.host_docs)
    can.add_argument("--heldout-docs", type=int, default=defaults.heldout_docs)
    can.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    can.set_defaults(func=cmd_canary)
    return parser


def _probe_defaults():
    from curation.evaluation.canary import ProbeSettings

    return ProbeSettings()


def main(argv: list[str] | None = None) -> int:
    """Run a command; a user error is answered in two lines (what and where, what to do) and exit code 2,
    any other error in one line and exit code 1; ``--debug`` (anywhere on the line) shows the traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    args = build_parser().parse_args(argv)
    if debug:
        return int(args.func(args) or 0)
    from curation.preflight import USER_ERRORS, hint_for

    try:
        return int(args.func(args) or 0)
    except USER_ERRORS as exc:
        hint = hint_for(exc)
        print(f"curation {args.command}: error: {exc}\n  {hint} (--debug shows the traceback)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"curation {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        print(
            f"curation {args.command}: unexpected {type(exc).__name__}: {exc}\n"
            "  this is a bug, not your input: run again with --debug and report the traceback",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
