"""The HF backend's runners (transformers, sentence-transformers): one module per model family.

:mod:`~tierank.hps.hf.biencoder` (``biencoder``), :mod:`~tierank.hps.hf.crossencoder` (``cross``) and
:mod:`~tierank.hps.hf.generative` (``yesno``, ``rank1``).  Each loads its model offline and runs its
forward pass; the prompts, pair encodings, the timed loop and the scoring functions are shared
(:mod:`tierank.hps.prompts`, :mod:`tierank.hps.encodings`, :mod:`tierank.hps.base`,
:mod:`tierank.hps.regimes`).  This package imports nothing.
"""
