"""Reports: metrics computed from the store, the paper's analyses with confidence intervals, and renderings."""

from commet.reports.analyses import Bootstrap, Report, Section, build_report, compare_runs
from commet.reports.metrics import RunMetrics, Tally, run_metrics, select_runs
from commet.reports.render import render_report
from commet.reports.stats import Estimate, Range, bootstrap_ratio, mcnemar_exact, paired_comparison
from commet.reports.tables import accuracy_table, to_csv, to_markdown

__all__ = [
    "Bootstrap", "Estimate", "Range", "Report", "RunMetrics", "Section", "Tally", "accuracy_table", "bootstrap_ratio",
    "build_report", "compare_runs", "mcnemar_exact", "paired_comparison", "render_report", "run_metrics",
    "select_runs", "to_csv", "to_markdown",
]
