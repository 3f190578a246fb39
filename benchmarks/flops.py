"""FLOPs of scoring one token with the loaded model (shared by the CPU and GPU scoring benchmarks)."""

from __future__ import annotations


class ModelFlops:
    """Model FLOPs of scoring one token, counted from the loaded model (no weights of ours assumed):

        flops(token) = 2 * P_linear + 4 * n_layers * n_heads * head_dim * keys

    P_linear is every nn.Linear weight of the model including the output layer (one multiply-add per
    weight per token; the embedding lookup is not a matmul); the second term is attention, QK^T plus
    attention-weighted V for every query head over the ``keys`` positions the token attends to (its
    context in its chunk, prompt included, plus itself). Norms, rotary, activations and the softmax are
    left out (elementwise, <1%). SmolLM2-135M: 2 * 134.5M + 69k * keys, ~0.27 GFLOP at 128 keys.
    Only scored tokens count: overlap context recomputed across chunks and padding are overhead, so the
    pipeline's FLOP/s is what it achieves on useful work."""

    def __init__(self, model) -> None:
        import torch

        self.linear_params = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
        cfg = model.config
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.attention_per_key = 4 * cfg.num_hidden_layers * cfg.num_attention_heads * head_dim

    def of_keys(self, keys: int) -> float:
        return 2.0 * self.linear_params + self.attention_per_key * keys

    def of_rows(self, width: int) -> float:
        """A row of ``width`` tokens scored at positions 1..width-1 (position j predicted from j-1, j keys)."""
        return sum(self.of_keys(j) for j in range(1, width))

    def of_plan(self, chunks: list[tuple[int, int, int]], prefix_len: int) -> float:
        """Chunks (lo, first, hi) of one document: token i is predicted from position prefix+i-lo-1."""
        return sum(self.of_keys(prefix_len + i - lo) for lo, first, hi in chunks for i in range(first, hi))
