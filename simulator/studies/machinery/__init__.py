"""What the studies are built of, beside the questions that use them (the command modules
of :mod:`simulator.studies`): the races with their guarantee (racing), the armies of
``best`` (armies, army_battles), the cell bank and answer of ``prices`` (price_cells,
price_list), one-type battles (one_type) and the balance baseline file (baseline). No
module here imports a command module (an import-linter contract)."""
