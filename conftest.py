"""Root conftest: doctest collection of modules whose examples need the optional model stack."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("sentence_transformers") is None:
    # its doctest quantizes with sentence-transformers (the `models` extra)
    collect_ignore.append("src/tierank/hps/quantized.py")
