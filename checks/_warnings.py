"""Warnings the code location silences on import, each for a stated reason."""

import warnings

import dagster as dg

# Checks partitioned like the assets they guard are the design (each batch's gate results are its own);
# Dagster marks that preview and would warn at every import of the code location, in every run's output.
PARTITIONED_CHECKS = "Specifying a partitions_def on an AssetCheckSpec"
warnings.filterwarnings("ignore", message=PARTITIONED_CHECKS, category=dg.PreviewWarning)
