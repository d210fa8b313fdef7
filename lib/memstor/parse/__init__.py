"""Pure text -> tidy rows: fio (JSON, json+, text, terse), MLC and loadlat, file walking and detection.

Entry points: memstor.parse.fio (parse_fio, looks_like_fio, load_fio_json, ...), memstor.parse.mlc
(parse_mlc, looks_like_mlc) and memstor.parse.files (``memstor parse``: walk, detect, write CSVs).
fio's formats: fio_json, fio_text, fio_terse on fio_spec (job options, row skeleton). MLC's sections:
mlc_header, mlc_loaded, mlc_matrix, mlc_bandwidth on mlc_state, rows by mlc_rows. guards: one-line
messages, emptied impossible cells and the exceptions a damaged file can raise, for all of them.
fio_bins (json+ histograms as tidy bin rows), fio_logs (interval and histogram logs), fio_intervals (a
point's batch-means interval from its logs), fio_status (fio's --status-interval snapshots), drive (nvme
and smartctl output), loadlat_json.

Layer: imports memstor.core only; pure functions of text (the only files it opens are the ones it is asked
to parse).
"""
