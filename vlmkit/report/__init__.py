"""`vlmkit report`: the table of every model x dataset run under one or more work dirs, a static HTML page to see
why a model missed, the samples whose verdict changed between two runs, and, for one run, how far each difference
from VLMEvalKit moves its score.

It reads the files runs leave (results.json, predictions.jsonl, perf_summary.json and its plots) and nothing else:
no model or dataset code is imported, so a report works on results copied from another machine.

Modules, one job each: runs.py (finding results.json files, also those set aside as results.staleN.json, read as
Runs), samples.py (predictions.jsonl as per-sample verdicts), table.py (the leaderboard rows and grid), export.py
(console, markdown, CSV), diff.py (verdict changes between two runs), explain.py (--explain: reading, prompt family,
preset and judge against VLMEvalKit), judge_effect.py (the headline without the judge, where the files say it),
thumbs.py (image thumbnails), perf_runs.py (perf summaries), frame_curve.py (score against frames: a video
benchmark run at several frame budgets), video_modes.py (frames vs video_url vs a local model on the same rows),
page.py (the HTML page; page.html, page.css and page.js are its template), cli.py (the subcommand).
"""
