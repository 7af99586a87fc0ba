"""Every registered measure family has a brute-force test, derived from the registry.

The brute-force tests enumerate every ordering of every tie group (``reference.orderings``).
``tests/measures/test_bruteforce_every_family.py`` does so for every registered family with no list
(its statistics over ties against its values on each ordering), so a new family's module is checked
with no other file touched; the modules below compare tierank's statistics with a reference written
from the textbook definition, and declare the measures they parametrise.  A family in
:data:`tierank.measures.REGISTRY` that neither covers fails here by name.
"""

from __future__ import annotations

from measures import (
    test_bruteforce,
    test_bruteforce_every_family,
    test_diversity,
    test_families_exact,
    test_families_irm,
    test_families_sampled,
    test_trec_extra,
    test_trec_gain,
)
from tierank.measures import REGISTRY, parse_measure

# module -> the measures its brute-force tests evaluate on every ordering
BRUTE_FORCE: dict[str, list[str]] = {
    "tests/measures/test_bruteforce.py": list(test_bruteforce.MEASURES),
    "tests/measures/test_families_exact.py": test_families_exact.EXACT + test_families_exact.COUNTS,
    "tests/measures/test_families_sampled.py": list(test_families_sampled.MEASURES),
    "tests/measures/test_trec_gain.py": list(test_trec_gain.MEASURES)
    + list(test_trec_gain.STRINGS),
    "tests/measures/test_trec_extra.py": list(test_trec_extra.MEASURES),
    "tests/measures/test_families_irm.py": list(test_families_irm.MEASURES),
    "tests/measures/test_diversity.py": list(test_diversity.MEASURES),
}


def covered() -> dict[str, list[str]]:
    """family -> the modules whose brute-force parametrisation has a measure of it."""
    out: dict[str, list[str]] = {}
    for module, measures in BRUTE_FORCE.items():
        for text in measures:
            out.setdefault(parse_measure(text).family, []).append(module)
    return out


def test_every_registered_family_has_a_brute_force_test():
    families = {cls.family for cls in REGISTRY.values()}
    enumerated = set(test_bruteforce_every_family.INSTANCES)
    missing = sorted(families - set(covered()) - enumerated, key=str.lower)
    assert not missing, (
        f"measure families no brute force checks: {', '.join(missing)} (a family with statistics "
        "over orderings is checked by test_bruteforce_every_family; any other needs a reference "
        f"in the parametrisation of one of {sorted(BRUTE_FORCE)})"
    )


def test_the_parametrisations_name_registered_families_only():
    assert set(covered()) <= {cls.family for cls in REGISTRY.values()}
