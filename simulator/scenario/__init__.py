"""Scenarios: files and one-line queries validated into :class:`~.scenario.Scenario`
(:mod:`.scenario`), and unit costs from a ``--costs`` file (:mod:`.costs`)."""
