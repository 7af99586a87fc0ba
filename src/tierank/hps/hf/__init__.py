"""The HF backend's runners (transformers, sentence-transformers): one module per model family.

[`biencoder`][tierank.hps.hf.biencoder] (``biencoder``), [`crossencoder`][tierank.hps.hf.crossencoder] (``cross``) and
[`generative`][tierank.hps.hf.generative] (``yesno``, ``rank1``).  Each loads its model offline and runs its
forward pass; the prompts, pair encodings, the timed loop and the scoring functions are shared
([`tierank.hps.prompts`][tierank.hps.prompts], [`tierank.hps.encodings`][tierank.hps.encodings], [`tierank.hps.base`][tierank.hps.base],
[`tierank.hps.regimes`][tierank.hps.regimes]).  This package imports nothing.
"""
