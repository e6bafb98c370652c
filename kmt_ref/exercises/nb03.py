"""Exercises of notebook 03 (filled in by its author)."""
