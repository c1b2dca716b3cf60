"""Measure what cards add: data sets, metrics and the evaluation loop behind `kcard eval`."""
