"""Plots, tables, text and export (HTML/PDF through nbconvert templates).

Layer: imports memstor.analysis, memstor.parse and memstor.core (never measure, experiments or cli): the
report shows tables, it never measures. plots/ (one module per topic, shared style in plots/__init__),
text/ (display tables and sentences, one module per topic; memory_text for the memory curves' phrases),
tables (report/tables/*.csv), explore (the lab's interactive explorer) and export (nbconvert to HTML/PDF).
"""
