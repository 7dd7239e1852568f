"""How battles are run: the chunk plan and local runner (:mod:`.runner`), precision
rounds, Dask (:mod:`.distributed`), progress and checkpoints."""
