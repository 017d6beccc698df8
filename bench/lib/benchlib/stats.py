"""Small statistics helpers: every figure is a median (or a percentile) over repeated samples."""
import math
import statistics


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def percentile(values, fraction):
    """The nearest-rank percentile: the smallest sample with at least `fraction` of them at or below."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    rank = math.ceil(fraction * len(values) - 1e-9)
    return values[min(max(rank, 1), len(values)) - 1]


def ratio(value, reference):
    if value is None or not reference:
        return None
    return value / reference


def middle_half(values):
    """(25th, 75th) nearest-rank percentiles: where the middle half of the samples lie."""
    low, high = percentile(values, 0.25), percentile(values, 0.75)
    return None if low is None else (low, high)


def extremes(values):
    """(smallest, largest): the honest spread of a handful of repeats, too few for percentiles."""
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else None


def paired_ratios(values, references):
    """value / reference for each pair measured together (the same round or repeat)."""
    return [v / r for v, r in zip(values, references) if v is not None and r]
