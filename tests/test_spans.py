"""Span algebra: property-based invariants plus hand-checked examples."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from curation.core.spans import Span, char_mask, covered_chars, intersect, merge, spans_from_mask, subtract

N = 60
spans_strategy = st.lists(
    st.tuples(st.integers(0, N), st.integers(0, N), st.sampled_from(["A", "B"])).map(
        lambda t: Span(min(t[0], t[1]), max(t[0], t[1]), t[2])
    ),
    max_size=8,
)


@given(spans_strategy)
def test_merge_preserves_coverage_and_is_disjoint(spans):
    merged = merge(spans)
    assert char_mask(merged, N) == char_mask(spans, N)
    assert all(a.end < b.start for a, b in itertools.pairwise(merged))


@given(spans_strategy, spans_strategy)
def test_subtract_and_intersect_partition_coverage(spans, holes):
    left = char_mask(subtract(spans, holes), N)
    both = char_mask(intersect(spans, holes), N)
    original = char_mask(spans, N)
    hole_mask = char_mask(holes, N)
    for i in range(N):
        assert left[i] == (original[i] and not hole_mask[i])
        assert both[i] == (original[i] and hole_mask[i])


@given(st.lists(st.booleans(), max_size=N))
def test_spans_from_mask_round_trips(mask):
    assert char_mask(spans_from_mask(mask), len(mask)) == mask


def test_merge_keeps_label_of_longest_and_max_score():
    merged = merge([Span(0, 3, "A", 0.2, "x"), Span(2, 10, "B", 0.9, "y")])
    assert merged == [Span(0, 10, "B", 0.9, "x+y")]
    assert covered_chars([Span(0, 3), Span(2, 5), Span(7, 8)]) == 6


def test_invalid_span_is_rejected():
    import pytest

    with pytest.raises(ValueError):
        Span(5, 2)
