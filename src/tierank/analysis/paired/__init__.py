"""Paired tests of two systems' per-query values, as a registry.

A test is one module of this package with a ``run(pairs)`` function (and optionally an
``undecidable(pairs)`` function: why the test cannot decide a pair, where the exact randomization
test then answers) plus one [`register`][tierank.analysis.paired.register] line below.  ``tierank compare --test`` offers the
registered names, [`tierank.analysis.inference.paired_tests`][tierank.analysis.inference.paired_tests] dispatches on them, and the
terminal and HTML reports and the JSON read their display name and statistic label from here.
This module imports nothing heavy: the command line reads the names at start-up.

Examples
--------
>>> list(REGISTRY)
['t', 'wilcoxon', 'randomization', 'bootstrap']
>>> REGISTRY["wilcoxon"].statistic, REGISTRY["bootstrap"].sampled
('W', True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from importlib import import_module
from typing import Any


@dataclass(frozen=True)
class PairedTest:
    """One paired test.

    Attributes
    ----------
    name : str
        Its ``--test`` value.
    display : str
        Its name in captions, plural (``"t-tests"``).
    statistic : str or None
        The header of its statistic's column (``"t"``, ``"W"``); None where the statistic is the
        mean difference itself (shown as the difference).
    sampled : bool
        Whether its p-value may be a Monte Carlo estimate (then it carries samples, seed and se).
    module : str
        The module of this package holding ``run`` (and ``undecidable``).
    help : str
        One line for ``--help``.
    bootstrap : bool
        Whether ``run`` reads the query bootstrap's means of the differences (``Pairs.boot_d``, drawn
        once and shared with the bootstrap confidence intervals).
    """

    name: str
    display: str
    statistic: str | None
    sampled: bool
    module: str
    help: str
    bootstrap: bool = False

    def implementation(self) -> Any:
        """The module holding ``run`` (imported on first use)."""
        return import_module(f"{__name__}.{self.module}")

    def to_dict(self) -> dict:
        """What the JSON says of the test: its name, display name, statistic label, whether it is
        sampled, and its help line."""
        return {k: v for k, v in asdict(self).items() if k not in ("module", "bootstrap")}


#: the registered tests, by name, in the order the command line lists them
REGISTRY: dict[str, PairedTest] = {}


def register(test: PairedTest) -> PairedTest:
    """Add ``test`` to `REGISTRY` (a name taken by another test is an error)."""
    taken = REGISTRY.get(test.name)
    if taken is not None and taken != test:
        raise ValueError(f"paired test {test.name!r} is already registered")
    REGISTRY[test.name] = test
    return test


register(
    PairedTest("t", "t-tests", "t", False, "student", "the paired t-test (scipy.stats.ttest_rel)")
)
register(
    PairedTest(
        "wilcoxon",
        "Wilcoxon signed-rank tests",
        "W",
        False,
        "wilcoxon",
        "Wilcoxon signed-rank (scipy.stats.wilcoxon: exact, permutation or approx)",
    )
)
register(
    PairedTest(
        "randomization",
        "randomization (sign-flip) tests",
        None,
        True,
        "randomization",
        "Fisher sign flips: exact with <= 20 nonzero differences, else Monte Carlo",
    )
)
register(
    PairedTest(
        "bootstrap",
        "bootstrap tests",
        None,
        True,
        "bootstrap",
        "paired bootstrap of the mean difference",
        bootstrap=True,
    )
)

__all__ = ["REGISTRY", "PairedTest", "register"]
