"""The balance studies: questions answered by running many scenarios (compare, sweep,
regress, worth, matrix, sensitivity) and the exact front-end. Each builds scenarios and
hands them to :mod:`simulator.running`."""
