"""Scoring: answer extraction and metrics per task kind. Pure functions over pandas tables; no model, and no I/O but
the packaged scorer-id table (ids.py reads scorer_ids.tsv)."""
