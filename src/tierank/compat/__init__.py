"""Drop-in replacements of other evaluation tools' Python interfaces, tie-aware underneath.

* [`tierank.compat.pytrec_eval`][tierank.compat.pytrec_eval]: ``import tierank.compat.pytrec_eval as
  pytrec_eval``, then ``pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)`` as before.
"""
