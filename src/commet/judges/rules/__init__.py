"""The ``rules`` judge (:class:`RulesJudge`): decides only what is certain, in a package of small parts.

:mod:`.scratch` takes reasoning (think blocks, drafts) out of a reply; :mod:`.marks` reads a reply and the marks
that change its meaning; :mod:`.labels` option labels;
:mod:`.options` the options offered; :mod:`.roles` the question's frame; :mod:`.conclusions` where a
reply states its answer; :mod:`.yesno` yes/no answers; :mod:`.lexicon` the word lists (``lexicon.json``);
:mod:`.judge` puts them together.
"""

from commet.judges.rules.judge import RulesJudge, decide

__all__ = ["RulesJudge", "decide"]
