"""The human baseline: anonymous human studies in the StoryTurn format (paper, section 4.5 and Appendix D).

``build`` selects the questionnaires, ``db`` keeps participants and answers, ``flow`` replays
a participant's StoryTurn with the engine's feedback and branch rules, ``app`` serves it and
``export`` turns the answers into CSV/JSONL and into a ``human`` run of the results store.
"""
