"""Exercises of notebook 02 (filled in by its author)."""
