"""Drawings, interactive panels for the static book, and ipywidgets."""
