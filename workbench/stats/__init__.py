"""Statistics, the lowest floor: every interval, test, kappa, corrected rate, bootstrap rule,
selection bias and power figure of the package is defined here and nowhere else
(tests/test_layout.py fails on one defined elsewhere). Pure functions of their inputs and a
seed; evaluation, golden, generation, sweep and gate import them.

Layer: the lowest, with :mod:`workbench.io`, :mod:`workbench.text`, :mod:`workbench.ranking`
and :mod:`workbench.runtime`; imports only :mod:`workbench.io` and :mod:`workbench.text`.

Undefined statistics have one answer: NaN (a kappa with no items or one and the same
category from both raters, :data:`~workbench.stats.kappa.UNDEFINED`; a corrected rate of a
judge at chance, :func:`rogan_gladen`), never a numpy warning; a resample whose statistic
is undefined counts at the low end of the range for the lower bound and the high end for
the upper one (:func:`percentile_bounds`).

Is a difference between two configurations larger than noise? Paired statistics for small
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

The package is split by concern: :mod:`~workbench.stats.intervals` (Clopper-Pearson, Wilson,
bootstrap intervals, the undefined-resample rule and the shared input checks),
:mod:`~workbench.stats.significance` (permutation test, McNemar and the sign test, one- and
two-sided, Holm), :mod:`~workbench.stats.power` (what n questions can detect),
:mod:`~workbench.stats.comparison` (:class:`PairedComparison`, :func:`compare_paired`,
:func:`compare_many`, :func:`comparison_table`), :mod:`~workbench.stats.kappa` (Cohen's
kappa, unweighted and weighted), :mod:`~workbench.stats.prevalence` (Rogan-Gladen and Lang
and Reiczigel's interval) and :mod:`~workbench.stats.selection` (the winner's curse).
Importing it loads ``scipy.special`` only, never ``scipy.stats``.
"""

from __future__ import annotations

from workbench.stats.comparison import (
    Flip,
    PairedComparison,
    compare_many,
    compare_paired,
    comparison_table,
)
from workbench.stats.intervals import (
    SMALL_N,
    bootstrap_ci,
    clopper_pearson,
    is_small_sample,
    mean_interval,
    paired_bootstrap_ci,
    percentile_bounds,
    wilson,
)
from workbench.stats.kappa import cohen_kappa
from workbench.stats.power import (
    minimal_detectable_difference,
    one_question,
    questions_needed,
)
from workbench.stats.prevalence import rogan_gladen, rogan_gladen_interval
from workbench.stats.selection import selection_bias
from workbench.stats.significance import (
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
    "cohen_kappa",
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
    "percentile_bounds",
    "questions_needed",
    "rogan_gladen",
    "rogan_gladen_interval",
    "selection_bias",
    "sign_test",
    "wilson",
]
