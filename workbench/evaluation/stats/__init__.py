"""Is a difference between two configurations larger than noise? Paired statistics for small
golden sets.

Golden sets are small (50-80 questions), so one question moves a mean by 1/n: 2 points at
n=50. Every comparison here is *paired*: both configurations answer the same questions, and
the per-question difference is what is analysed.

Conventions
    * ``a`` is the baseline and ``b`` the candidate; differences are always ``b - a``, so a
      positive ``delta`` means the candidate scores higher. Higher is assumed to be better
      (recall, hit rate, MRR, nDCG).
    * Per-question values are floats; a metric is *binary* when every value is 0 or 1
      (hit@k, success@k). Paired differences with ``|b - a| <= 1e-12`` count as ties.
    * "Points" are percentage points: a delta of 0.04 is 4 points.
    * Everything is a pure function of its inputs and ``seed``; results are reproducible.
      Questions are aligned by qid and sorted, so dict order never changes a result.

Tests
    * :func:`mcnemar_exact` for binary outcomes: only the questions whose outcome changed
      matter; under no difference each change is equally likely to go either way, so the
      count of gains is Binomial(changes, 1/2).
    * :func:`paired_permutation_test` for anything else: under no difference each per-question
      difference is equally likely to have either sign (sign-flip randomisation). For 0/1
      values its exact p-value equals McNemar's.
    * :func:`bootstrap_ci` / :func:`paired_bootstrap_ci`: percentile bootstrap intervals. They
      describe the size of an effect; the verdict comes from the test, not from the interval.
      At n around 50 the percentile interval is slightly narrow (coverage a little under the
      nominal level) and can exclude 0 when the exact test does not reject, e.g. 5 gains and
      0 losses: McNemar p = 0.0625.
    * :func:`holm` adjusts p-values when several candidates are compared with one baseline.

How big a difference can n questions see?
    :func:`minimal_detectable_difference` (normal approximation for a paired test)::

        MDD = (z_{1-alpha/2} + z_{power}) * sqrt(d / n)

    where ``d`` is the mean squared per-question difference ``E[(b - a)^2]``. For 0/1
    outcomes this is the *discordance*: the fraction of questions whose outcome differs
    between the two configurations. The default assumes two configurations that disagree as
    often as two independent systems with success rate p: ``d = 2 p (1 - p)`` (0.42 at
    p = 0.7). With alpha = 0.05 and 80 % power (z-sum 2.80) that gives 25.7 points at n=50,
    23.4 at n=60 and 18.2 at n=100. Closely related configurations disagree less; pass the
    observed discordance (:attr:`PairedComparison.discordance`) for a sharper figure, e.g.
    d = 0.2 gives 17.7 points at n=50. Either way it is far above the 2 points that one
    question is worth (:func:`one_question`): a difference of one or two questions is noise,
    and a CI tolerance below about 5 points at n=50 fails on noise alone.

The package is split by concern: :mod:`~workbench.evaluation.stats.intervals` (bootstrap
intervals and the shared input checks), :mod:`~workbench.evaluation.stats.significance`
(permutation test, McNemar, Holm), :mod:`~workbench.evaluation.stats.power` (what n
questions can detect) and :mod:`~workbench.evaluation.stats.comparison`
(:class:`PairedComparison`, :func:`compare_paired`, :func:`compare_many`,
:func:`comparison_table`). Importing it loads ``scipy.special`` only,
never ``scipy.stats``.
"""

from __future__ import annotations

from workbench.evaluation.stats.comparison import (
    Flip,
    PairedComparison,
    compare_many,
    compare_paired,
    comparison_table,
)
from workbench.evaluation.stats.intervals import (
    SMALL_N,
    bootstrap_ci,
    clopper_pearson,
    is_small_sample,
    mean_interval,
    paired_bootstrap_ci,
)
from workbench.evaluation.stats.power import (
    minimal_detectable_difference,
    one_question,
    questions_needed,
)
from workbench.evaluation.stats.significance import (
    EXACT_MAX,
    McNemarResult,
    format_p,
    holm,
    mcnemar_exact,
    paired_permutation_test,
    sign_test,
)

__all__ = [
    "EXACT_MAX",
    "SMALL_N",
    "Flip",
    "McNemarResult",
    "PairedComparison",
    "bootstrap_ci",
    "clopper_pearson",
    "compare_many",
    "compare_paired",
    "comparison_table",
    "format_p",
    "holm",
    "is_small_sample",
    "mcnemar_exact",
    "mean_interval",
    "minimal_detectable_difference",
    "one_question",
    "paired_bootstrap_ci",
    "paired_permutation_test",
    "questions_needed",
    "sign_test",
]
