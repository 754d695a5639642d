"""LaTeX rendering: one booktabs ``table`` per section (needs ``\\usepackage{booktabs}``)."""

from __future__ import annotations

from commet.reports.analyses import Report, Section
from commet.reports.cells import run_legend
from commet.reports.stats import Estimate, Range

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}"}


def escape(text: str) -> str:
    """Text safe inside a LaTeX table cell, printed as written: "--" stays two hyphens (a command's
    ``--judge``, not an en dash), and ``<`` and ``>`` are not the old text fonts' inverted marks."""
    return "".join(_SPECIAL.get(ch, ch) for ch in text).replace("--", "-{}-").replace("--", "-{}-")


def _cell(cell: str | Estimate, fraction: bool) -> str:
    if not isinstance(cell, Estimate):
        return escape(cell)
    if cell.value is None:
        return "--"
    low, high = cell.interval
    interval = f"{{\\scriptsize [{low:.1f}, {high:.1f}]}}"
    if isinstance(cell, Range) and cell.upper.value is not None:
        return f"{cell.value:.2f}--{cell.upper.value:.2f} {interval}"
    if fraction:
        return f"{cell.k:g}/{cell.n:g} {{\\scriptsize ({cell.value:.1f}\\%)}}"
    return f"{cell.value:.2f} {interval}"


def section_latex(section: Section) -> str:
    numeric = [i for i in range(len(section.header))
               if section.rows and all(isinstance(row[i], Estimate) for row in section.rows)]
    spec = "".join("r" if i in numeric else "l" for i in range(len(section.header)))
    lines = [r"\begin{table}[ht]", r"\centering", r"\small", f"\\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(escape(h) for h in section.header) + r" \\", r"\midrule"]
    lines.extend(" & ".join(_cell(c, section.fraction) for c in row) + r" \\" for row in section.rows)
    caption = escape(section.title + (f". {section.note}" if section.note else ""))
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{caption}}}", f"\\label{{tab:commet-{section.key}}}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_latex_report(report: Report) -> str:
    header = (f"% CoMMET report: runs (short id, name) {run_legend(report)}\n"
              f"% 95% percentile bootstrap over StoryTurns ({report.bootstrap.resamples} resamples, "
              f"seed {report.bootstrap.seed}); needs \\usepackage{{booktabs}}\n"
              + "".join(f"\\noindent {escape(str(line))}\\par\n" for line in report.notices))
    return header + "\n".join(section_latex(s) for s in report.sections)
