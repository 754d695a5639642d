"""Reports: metrics computed from the store and the tables of ``commet report``."""

from commet.reports.metrics import RunMetrics, Tally, run_metrics, select_runs
from commet.reports.tables import accuracy_table, to_csv, to_markdown

__all__ = ["RunMetrics", "Tally", "accuracy_table", "run_metrics", "select_runs", "to_csv", "to_markdown"]
