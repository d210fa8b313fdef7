"""Pure text -> tidy rows: fio (JSON, json+, text, terse), MLC and loadlat, file walking and detection."""
