"""What the studies are built of, beside the questions that use them (the command modules
of :mod:`simulator.studies`): the races with their guarantee (racing), the armies of
``best`` (armies, army_battles), the cell bank and answer of ``prices`` (price_cells,
price_list), one-type battles (one_type), the balance baseline file (baseline), the
sequential tests of ``sweep --target`` and ``worth`` (sequential), Holm's test of
``regress`` (inference), the zero-sum games of ``meta`` (games), a study's progress
(progress), ``side`` (sides), the ``plan=`` every public study takes (planned) and the
old names kept a release (renamed). No module here imports a command module, and a
command module borrows nothing of another: what two share lives here (import-linter
contracts)."""
