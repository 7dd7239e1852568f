"""What a run produces: exact tallies and intervals (:mod:`.stats`) and the
:class:`~.result.Result` built from them."""
