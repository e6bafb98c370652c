"""Exercises of notebook 04 (filled in by its author)."""
