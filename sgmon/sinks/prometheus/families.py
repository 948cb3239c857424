"""A scrape's metric families: one per name, in order of first use, each taking samples
whose dimension labels differ from row to row, with any repeat of a label set dropped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)

from sgmon.sinks.prometheus.naming import IDENTITY


class Family:
    """One family whose samples may carry different dimension labels (``dest`` or ``thread``
    rows of the same collector), with any repeat of a label set dropped."""

    def __init__(self, metric: Metric) -> None:
        self.metric = metric
        self._seen: set[tuple] = set()

    def _new(
        self,
        ident: list[str],
        dims: Iterable[tuple[str, str]],
        extra: Mapping[str, str] | None = None,
    ) -> dict[str, str] | None:
        """The sample's labels, or None when this label set was added already."""
        labels = dict(zip(IDENTITY, ident, strict=True))
        labels.update(dims)
        labels.update(extra or {})
        sig = tuple(sorted(labels.items()))
        if sig in self._seen:
            return None
        self._seen.add(sig)
        return labels

    def add(
        self,
        ident: list[str],
        dims: Iterable[tuple[str, str]],
        value: float,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        labels = self._new(ident, dims, extra)
        if labels is None:
            return
        suffix = "_total" if self.metric.type == "counter" else ""
        self.metric.add_sample(self.metric.name + suffix, labels, value)

    def add_histogram(
        self,
        ident: list[str],
        dims: Iterable[tuple[str, str]],
        buckets: list[tuple[str, float]],
        sum_value: float,
    ) -> None:
        labels = self._new(ident, dims)
        if labels is None:
            return
        name = self.metric.name
        for le, n in buckets:
            self.metric.add_sample(name + "_bucket", {**labels, "le": le}, n)
        self.metric.add_sample(name + "_count", labels, buckets[-1][1])
        self.metric.add_sample(name + "_sum", labels, sum_value)

    def add_summary(
        self, ident: list[str], dims: Iterable[tuple[str, str]], count: float, sum_value: float
    ) -> None:
        """A summary without quantiles: how many, and their total."""
        labels = self._new(ident, dims)
        if labels is None:
            return
        self.metric.add_sample(self.metric.name + "_count", labels, count)
        self.metric.add_sample(self.metric.name + "_sum", labels, sum_value)


class Families:
    """The families of one scrape, in order of first use."""

    def __init__(self) -> None:
        self._by_name: dict[str, Family] = {}

    def _get(self, name: str, make: Callable[[], Metric]) -> Family:
        fam = self._by_name.get(name)
        if fam is None:
            fam = self._by_name[name] = Family(make())
        return fam

    def gauge(self, name: str, doc: str) -> Family:
        """A gauge family."""
        return self._get(name, lambda: GaugeMetricFamily(name, doc))

    def counter(self, name: str, doc: str) -> Family:
        """A counter family (samples named ``<name>_total``)."""
        return self._get(name, lambda: CounterMetricFamily(name, doc))

    def histogram(self, name: str, doc: str) -> Family:
        """A histogram family."""
        return self._get(name, lambda: HistogramMetricFamily(name, doc))

    def summary(self, name: str, doc: str) -> Family:
        """A summary family (``_count`` and ``_sum``, no quantiles)."""
        return self._get(name, lambda: SummaryMetricFamily(name, doc))

    def families(self) -> Iterator[Metric]:
        """Every family with at least one sample."""
        return (f.metric for f in self._by_name.values() if f.metric.samples)
