"""Plots, tables, text and export (HTML/PDF through nbconvert templates)."""
