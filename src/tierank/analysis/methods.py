"""The names of a comparison's interval methods and p-value corrections.

Light (no numpy), so that the command line's choices, the settings' validation and the
implementations ([`inference.mean_cis`][tierank.analysis.inference.mean_cis],
[`significance.adjust_pvalues`][tierank.analysis.significance.adjust_pvalues]) read one list.

>>> CI_METHODS, CORRECTIONS
(('t', 'percentile', 'bca'), ('bonferroni', 'holm', 'bh'))
"""

from __future__ import annotations

#: confidence-interval methods of the systems' means and of the pairs' differences
CI_METHODS = ("t", "percentile", "bca")
#: multiple-comparison corrections of the pairs' p-values
CORRECTIONS = ("bonferroni", "holm", "bh")

__all__ = ["CI_METHODS", "CORRECTIONS"]
