"""Surrogate rewriting: realistic, consistent, format-preserving fakes per the redaction convention."""

import dagster as dg

from assets._common import DELIVERY_BATCHES, DELIVERY_GROUP, as_metadata, batch_config
from curation.views.stage import surrogate_stage
from resources import CurationSettings, KeyVault


@dg.asset(
    group_name=DELIVERY_GROUP,
    kinds={"duckdb", "faker"},
    deps=["redacted_view", "training_view"],
    partitions_def=DELIVERY_BATCHES,
)
def surrogate_view(
    context: dg.AssetExecutionContext, settings: CurationSettings, key_vault: KeyVault
) -> dg.MaterializeResult:
    """Text with masked spans rewritten per the redaction convention: keyed HMAC choice of fictional values,
    consistent within a conversation, format-preserving. The surrogate map goes to the vault (0600) only."""
    engine = key_vault.engine()
    # the stage opens the vault itself, only while it writes it: never while it holds the warehouse
    summary = surrogate_stage(batch_config(context, settings), settings.warehouse(), engine, key_vault.open_vault)
    summary["dev_key"] = key_vault.key().is_dev
    return dg.MaterializeResult(metadata=as_metadata(summary))
