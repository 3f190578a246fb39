"""Ingestion: the raw corpus of one delivery batch and the labeled validation set into the warehouse."""

import dagster as dg

from assets._common import (
    CALIBRATION_GROUP,
    DELIVERY_BATCHES,
    DELIVERY_GROUP,
    as_metadata,
    batch_config,
    one_connection,
)
from curation.ingest.stage import ingest_stage, validation_stage
from resources import CurationSettings


@dg.asset(group_name=DELIVERY_GROUP, kinds={"duckdb", "python"}, partitions_def=DELIVERY_BATCHES)
def raw_documents(context: dg.AssetExecutionContext, settings: CurationSettings) -> dg.MaterializeResult:
    """Input records of the batch (JSONL, Parquet, CSV or a folder of text/code files) as `documents` rows
    with stable ids and sha256; malformed, empty, oversize and duplicate records go to `quarantine` with a
    reason and locator. Records in = documents + quarantined."""
    config = batch_config(context, settings)
    summary = ingest_stage(config, settings.warehouse())
    context.log.info(f"ingested {summary['documents']} documents, quarantined {summary['quarantined']}")
    return dg.MaterializeResult(metadata=as_metadata({"batch_id": config.batch_id, **summary}))


@dg.asset(group_name=CALIBRATION_GROUP, kinds={"duckdb", "python"})
@one_connection
def validation_set(settings: CurationSettings) -> dg.MaterializeResult:
    """Labeled validation records (character spans) split into a calibration part and a held-out part."""
    config = settings.load()
    return dg.MaterializeResult(metadata=as_metadata(validation_stage(config, settings.warehouse())))
