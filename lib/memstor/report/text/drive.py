"""Report text, drive: the drive table (memstor.analysis.drive.drive_table) for display."""

from __future__ import annotations

import pandas as pd


def drive_display(drive: pd.DataFrame) -> pd.DataFrame:
    """The drive table (memstor.analysis.drive.drive_table) for the report: device, section, field (units
    in the name), and what is known: the value, for health 'before → after, delta', or 'not available
    (reason)'."""
    if drive.empty:
        return drive

    def shown(row) -> str:
        if not row["available"] or row["section"] == "health":
            return str(row["note"] or "")
        v = row["value"]
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    return pd.DataFrame({"device": drive["host"], "disk": drive["disk"].fillna("–"), "section": drive["section"],
                         "field": drive["field"], "value": drive.apply(shown, axis=1)})
