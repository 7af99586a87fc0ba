"""The parts of [`compare`][tierank.analysis.compare.compare], one job each: the result types (`results`), the
settings (`settings`), the systems lined up on their common queries (`align`), the measure's own
summaries and the inference's scale (`scales`), the systems' intervals, ranks and groups (`infer`),
the pairs' tests and flags (`pairs`) and, with human qrels for some queries, the prediction-powered
estimates (`ppi`).  [`tierank.analysis.compare`][tierank.analysis.compare] puts them together
and is where they are used from."""
