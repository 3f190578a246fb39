"""Ingestion: the raw corpus and the labeled validation set into the warehouse."""

import dagster as dg

from assets._common import GROUP, as_metadata
from curation.pipeline import ingest_stage, validation_stage
from resources import CurationSettings


@dg.asset(group_name=GROUP, kinds={"duckdb", "python"})
def raw_documents(context: dg.AssetExecutionContext, settings: CurationSettings) -> dg.MaterializeResult:
    """Input records (JSONL, Parquet, CSV or a folder of text/code files) as `documents` rows with stable
    ids and sha256; malformed, empty, oversize and duplicate records go to `quarantine` with a reason and
    locator. Records in = documents + quarantined."""
    config = settings.load()
    summary = ingest_stage(config, settings.warehouse())
    context.log.info(f"ingested {summary['documents']} documents, quarantined {summary['quarantined']}")
    return dg.MaterializeResult(metadata=as_metadata({"batch_id": config.batch_id, **summary}))


@dg.asset(group_name=GROUP, kinds={"duckdb", "python"})
def validation_set(settings: CurationSettings) -> dg.MaterializeResult:
    """Labeled validation records (character spans) split into a calibration part and a held-out part."""
    config = settings.load()
    return dg.MaterializeResult(metadata=as_metadata(validation_stage(config, settings.warehouse())))
