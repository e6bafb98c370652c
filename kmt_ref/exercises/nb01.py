"""Exercises of notebook 01 (filled in by its author)."""
