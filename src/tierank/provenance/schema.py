"""The manifest's schema: every key a manifest may hold, what it means, and the constants it is built with.

`SCHEMA` lists every key (the reference page of the documentation is generated from it); the
document itself is described in [`tierank.provenance.manifest`][tierank.provenance.manifest], built
by [`tierank.provenance.build`][tierank.provenance.build] and read and written by
[`tierank.provenance.io`][tierank.provenance.io].
"""

from __future__ import annotations

#: the manifest schema's version (a change of meaning of any key increments it)
SCHEMA_VERSION = 1
#: the key that marks a tierank manifest (its value: the schema version)
MARK = "tierank manifest"
#: the settings that can change a number, as `tierank.EvalSettings` names them
NUMBER_SETTINGS = (
    "tie_break",
    "rel",
    "complete",
    "candidates_only",
    "unjudged",
    "judged_only",
    "max_depth",
    "samples",
    "seed",
    "exact_limit",
)
#: the libraries whose version is recorded (those loaded in the process, among the optional ones)
LIBRARIES = ("numpy", "pyarrow", "scipy", "pandas")
OPTIONAL_LIBRARIES = ("torch", "transformers", "sentence_transformers", "vllm", "onnxruntime")
#: the blocks of ``method.evaluation`` that hold a command's own settings, beside ``settings``
COMMAND_BLOCKS = ("compare", "judges", "rerank", "estimates")
#: the per-query columns the results digest covers
DIGEST_COLUMNS = ("oblivious", "expected", "min", "max", "var")
#: the float formats a run's scores are tested against, narrowest first
SCORE_FORMATS = ("bf16", "fp16", "fp32")


#: every key of a manifest: (its path, with ``[]`` for a list's items and ``*`` for any name; what it
#: holds). The reference page of the documentation is generated from it, and a test checks that a
#: written manifest has no key it lacks.
SCHEMA: tuple[tuple[str, str], ...] = (
    (MARK, "the manifest schema's version (1)"),
    (
        "tag",
        "ir_metadata's tag: the run's own (its header's, else its sixth column), or a list of them",
    ),
    ("platform.hardware.cpu.model", "the CPU's model name"),
    ("platform.hardware.cpu.architecture", "the machine's architecture (x86_64, arm64, ...)"),
    ("platform.hardware.cpu.number of cores", "the cores the operating system reports"),
    ("platform.hardware.ram", "the memory installed"),
    ("platform.operating system.kernel", "the kernel (system and release)"),
    ("platform.operating system.distribution", "the distribution, where the system names one"),
    (
        "platform.software.libraries.*",
        "the versions of Python, tierank, numpy, pyarrow, scipy, pandas, and of torch, transformers, "
        "sentence-transformers, vLLM and onnxruntime where the process loaded them",
    ),
    ("implementation.executable.name", "tierank"),
    ("implementation.executable.version", "tierank's version"),
    (
        "implementation.executable.command",
        "the command line, quoted as a shell reads it (null from Python)",
    ),
    (
        "method.evaluation.command",
        "the command whose numbers these are (eval, compare, judges, rerank)",
    ),
    (
        "method.evaluation.measures[]",
        "every measure evaluated, by canonical name (every parameter written out)",
    ),
    (
        "method.evaluation.settings.*",
        "every setting that can change a number: "
        + ", ".join(NUMBER_SETTINGS)
        + " (tierank.EvalSettings)",
    ),
    ("method.evaluation.docs_in_collection", "trec_eval's -N, where given"),
    (
        "method.evaluation.compare.*",
        "compare: every field of tierank.analysis.compare.CompareSettings that can change a number "
        "(alpha, band, correction, test, ci, level, seed, resamples, permutations, leaderboard, "
        "tie_samples)",
    ),
    (
        "method.evaluation.estimates.kind",
        "eval --ppi, --labels, --panel and compare --ppi: the estimate made beside the tie "
        "statistics (ppi, labels, panel)",
    ),
    (
        "method.evaluation.estimates.judge_column",
        "eval --labels, --panel: whether the judge was read from a column of the labels",
    ),
    (
        "method.evaluation.estimates.note",
        "what verify checks of the estimate: its inputs' SHA-256 (data.estimates), and which of "
        "its numbers it makes again",
    ),
    (
        "data.estimates[].role, path, sha256, size",
        "the files an estimate read (role: ppi human qrels, labels, panel judge), each with its "
        "path relative to the manifest's folder, SHA-256 and size",
    ),
    (
        "data.qrels.path",
        "the qrels' path, relative to the manifest's folder where it lies below it (null: given in memory)",
    ),
    (
        "data.qrels.sha256",
        "the SHA-256 of the file's bytes as stored (a .gz file's compressed bytes)",
    ),
    ("data.qrels.size", "its size in bytes"),
    (
        "data.qrels.files[]",
        "a folder's files, each with path, sha256 and size (the folder's sha256 covers them)",
    ),
    (
        "data.judges[].path, sha256, size",
        "judges: each judge's file (path relative to the manifest's folder, SHA-256, size); the "
        "reference is data.qrels",
    ),
    ("data.candidates.*", "rerank: the first-stage run reranked (path, sha256, size)"),
    (
        "data.collection.*",
        "rerank: the BEIR-layout data folder (path, sha256, size, files: each file's record)",
    ),
    ("data.collection.files[].*", "rerank: a data file's path (in the folder), sha256 and size"),
    (
        "data.models[].*",
        "rerank: each model's folder or file (path, sha256, size, files; null sha256: a name "
        "that is not a local path)",
    ),
    ("data.models[].files[].*", "rerank: a model file's path (in the folder), sha256 and size"),
    ("data.runs[].name", "the run's name in the results (its shortest distinguishing path suffix)"),
    ("data.runs[].path", "as data.qrels.path"),
    ("data.runs[].sha256", "as data.qrels.sha256"),
    ("data.runs[].size", "as data.qrels.size"),
    ("data.runs[].files[]", "as data.qrels.files"),
    (
        "data.runs[].ir_metadata",
        "the run file's own ir_metadata header (# ir_metadata.start ... end), as read",
    ),
    ("data.runs[].ties.tie groups", "groups of two or more documents of a query sharing a score"),
    ("data.runs[].ties.tied documents", "documents in those groups"),
    ("data.runs[].ties.tied share", "tied documents / documents"),
    ("data.runs[].ties.largest group", "the largest group (1: nothing ties)"),
    ("data.runs[].ties.queries with ties", "queries with at least one tie group"),
    (
        "data.runs[].ties.score format",
        "the narrowest of bf16, fp16, fp32 that holds every score exactly, else fp64 (null: not inferred)",
    ),
    ("data.runs[].ties.score format note", "why the score format was not inferred"),
    ("results[].run", "the run's name"),
    ("results[].measures[].measure", "the measure's canonical name"),
    (
        "results[].measures[].oblivious, expected, min, max, range, bias, std",
        "the aggregate statistics, as the jsonl records hold them",
    ),
    (
        "results[].measures[].method",
        "exact, or how the statistics were estimated (then samples, seed and se)",
    ),
    (
        "results[].measures[].samples, seed, se",
        "a sampled measure's samples, seed and standard error",
    ),
    ("results[].measures[].queries", "the queries evaluated"),
    (
        "results[].measures[].per_query_sha256",
        "SHA-256 of the query ids and the per-query oblivious, expected, min, max and variance",
    ),
    ("results.measure", "compare: the measure compared"),
    ("results.queries", "compare: the queries compared (those common to every system)"),
    ("results.dropped_queries", "compare: the queries left out (not in every system)"),
    (
        "results.systems[].name, oblivious, expected, min, max, std, ci_low, ci_high, rank, "
        "rank_oblivious, rank_low, rank_high, group",
        "compare: each system's aggregate statistics, confidence interval and ranks (as in "
        "`tierank compare -f json`)",
    ),
    (
        "results.pairs[].a, b, diff_expected, diff_oblivious, p, p_test, p_adjusted, significant, "
        "diff_ci_low, diff_ci_high, p_a_above, test_used, method, samples, seed, se",
        "compare: each pair's differences, p-values (the test's own, the floored and the adjusted), "
        "interval of the difference, P(A>B), and how p was found (with samples, seed and se where "
        "sampled)",
    ),
    (
        "method.evaluation.judges.*",
        "judges: its options (judge_column, scale, out_of_scale, "
        "missing, rel, bootstrap, confidence, seed)",
    ),
    (
        "results.agreement[].*",
        "judges: each judge's pooled agreement with the reference (n_pairs, n_queries, Cohen's "
        "kappa, Krippendorff's alpha, binarised agreement, their bootstrap intervals, the "
        "confusion matrix), as `-f json` writes it",
    ),
    (
        "results.agreement[].confusion.*",
        "judges: the confusion matrix (its grades, rows the reference's, columns the judge's, and "
        "the counts)",
    ),
    (
        "results.orderings[].*",
        "judges with --runs: how the system ordering moves under each judge (Kendall's tau-b, "
        "tau-AP, the largest rank change, the significant pairs that flip)",
    ),
    (
        "results.systems[].judge, run, measure, mean, queries",
        "judges with --runs: each system's mean under the reference and under each judge",
    ),
    (
        "method.evaluation.rerank.*",
        "rerank: model, family, source, variants, batch_size, device, backend, queries, "
        "candidates (counts) and the run-to-run variance's batch_sizes, orders, padding_sides",
    ),
    ("method.evaluation.rerank.scorers.*", "rerank: each scorer (a model group) by its name"),
    (
        "method.evaluation.rerank.scorers.*.*",
        "rerank: each scorer's scorer, model_dtype, similarity, batch_size, device, backend",
    ),
    (
        "results.rows[].*",
        "rerank: the table's rows (table.json's) without their timings",
    ),
    (
        "results.variance.batch_sizes, orders, padding_sides, repeats, settings",
        "rerank with --batch-sizes, --orders or --padding-sides: the settings each variant was "
        "scored under again (as table.json's variance)",
    ),
    ("results.variance.variants.*", "rerank: each variant's run-to-run variance"),
    (
        "results.variance.variants.*.changed_share, measures",
        "the share of candidates whose score changed under another setting; the measures",
    ),
    ("results.variance.variants.*.measures.*", "each measure's run-to-run variance"),
    (
        "results.variance.variants.*.measures.*.expected, tie_range",
        "E[M] and the tie range (max - min over tie orderings) under each setting",
    ),
    (
        "results.variance.variants.*.measures.*.expected.*",
        "E[M] under the setting named",
    ),
    (
        "results.variance.variants.*.measures.*.tie_range.*",
        "the tie range under the setting named",
    ),
    (
        "results.variance.variants.*.measures.*.spread, larger",
        "the spread of E[M] across the settings, and which moves the number more: ties (the "
        "widest tie range is at least the spread) or settings",
    ),
    (
        "results.variance.variants.*.measures.*.spreads",
        "the spread of E[M] per source of change (over the table's setting and that source's)",
    ),
    (
        "results.variance.variants.*.measures.*.spreads.*",
        "batch sizes, order, padding or repeat: that source's spread",
    ),
    (
        "results.variance.variants.*.measures.*.largest",
        "which of ties (the widest tie range) and the sources' spreads moves the number most",
    ),
    (
        "seal.settings.*",
        "a digest of each setting (verify names the setting edited); a command's own block's as "
        "BLOCK/KEY",
    ),
    ("seal.measures", "a digest of the measures"),
    ("seal.inputs", "a digest of the inputs' SHA-256"),
    ("seal.results", "a digest of the results"),
)
