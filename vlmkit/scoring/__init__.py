"""Scoring: answer extraction and metrics per task kind. Pure functions over pandas tables; no model, no I/O."""
