"""Calibration plots (ROC, precision-recall, surprise histograms) as PNG files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from curation.policy.calibration import Calibration, ScoredDoc, pooled


def save_calibration_plots(calibration: Calibration, docs: list[ScoredDoc], out_dir: Path) -> dict[str, Path]:
    """Write roc.png, pr.png and nll_hist.png for the chosen operating point; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    s = calibration.best_sweep
    point = calibration.point.metrics
    paths = {}

    fig, ax = plt.subplots(figsize=(4.5, 4))
    ax.plot(np.r_[0, s.fpr], np.r_[0, s.tpr], label=f"{calibration.policy} (chosen)")
    ax.scatter([point.fpr], [point.tpr], color="red", zorder=3, label="operating point")
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey")
    ax.set(
        xlabel="FPR (collateral)",
        ylabel="TPR (coverage)",
        title=f"ROC of the chosen policy ({calibration.policy})",
    )
    # the surprise score's own AUROC describes another curve (surprise alone): a note, not the title
    ax.text(
        0.02,
        0.97,
        f"surprise-only AUROC {calibration.surprise_auroc:.3f}",
        va="top",
        fontsize=7,
        transform=ax.transAxes,
    )
    ax.legend(loc="lower right", fontsize=8)
    paths["roc"] = _save(fig, out_dir / "roc.png")

    fig, ax = plt.subplots(figsize=(4.5, 4))
    ax.plot(s.tpr, s.precision)
    ax.scatter([point.tpr], [point.precision], color="red", zorder=3)
    ax.set(xlabel="recall (TPR)", ylabel="precision", title="Precision-recall", ylim=(0, 1.02))
    paths["pr"] = _save(fig, out_dir / "pr.png")

    scores, gold = pooled(docs, "surprise", calibration.params)
    finite = np.isfinite(scores)
    fig, ax = plt.subplots(figsize=(4.5, 4))
    bins = np.linspace(*np.quantile(scores[finite], [0.001, 0.999]), 60) if finite.any() else 10
    ax.hist(scores[finite & ~gold], bins=bins, alpha=0.6, density=True, label="non-target chars")
    ax.hist(scores[finite & gold], bins=bins, alpha=0.6, density=True, label="target chars")
    if np.isfinite(calibration.point.threshold):
        ax.axvline(calibration.point.threshold, color="red", linestyle="--", label="threshold")
    ax.set(xlabel=f"surprise ({calibration.params.window.score_type})", ylabel="density", title="Surprise by target")
    ax.legend(fontsize=8)
    paths["nll_hist"] = _save(fig, out_dir / "nll_hist.png")
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
