"""The grading engine: the exercises, the confinement, a submission judged, a class graded, and the result model.

Its floors, lowest first: the vocabulary every part names (:mod:`.registry`,
:mod:`.results`); :mod:`.confinement`, the learner's side of the pipe; what a
handed-in folder holds (:mod:`.submissions`) and the judging of one submission
(this package's own modules); :mod:`.classes`, a class graded as a sequence of
submissions. Nothing here knows about any one command; the commands depend on
the engine, never the other way round.
"""
