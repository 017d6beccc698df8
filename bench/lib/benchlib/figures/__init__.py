"""One module per figure of the report; each has run(bench) -> a dict of plain values (kept in
results.json) that report.py turns into markdown."""
