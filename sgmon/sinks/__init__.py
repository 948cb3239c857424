"""Sinks: callables that receive every frame, in order, from the Monitor's dispatcher thread."""
