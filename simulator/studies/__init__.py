"""The balance studies: questions answered by running many scenarios (compare, sweep,
regress, worth, matrix, sensitivity, prices, meta) and the exact front-end. Each builds
scenarios and hands them to :mod:`simulator.running`."""
