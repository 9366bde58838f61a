"""Reports: views of what a run produced. Nothing here judges or measures.

`common` (what every report shares: xml_safe, numbers as text, JUnit), the text, JSON and JUnit
reports of an eval (`evals`), a goldens run (`goldens`), a calibration (`calibration`, also
its disagreements as goldens) and an alignment (`alignment`, with the revision's diff);
`checklists`, `citations` and `output_fields` (the parts of a judgment those views and the page
share); the HTML report in its own package, `html/`: `data` (a results file as the page's
data), `comparison` (two runs), `page` (the page, with its HTML and scripts beside it) and
`pages` (the page of a run just made).

Other rooms import only the names of the face below (an import-linter contract holds them to it).
Only `integrations` and `cli` import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.reports.alignment import ALIGNMENT_FORMATTERS as ALIGNMENT_FORMATTERS
    from rubriclib.reports.alignment import alignment_last_line as alignment_last_line
    from rubriclib.reports.alignment import budget_text as budget_text
    from rubriclib.reports.calibration import CALIBRATION_FORMATTERS as CALIBRATION_FORMATTERS
    from rubriclib.reports.calibration import calibration_last_line as calibration_last_line
    from rubriclib.reports.calibration import calibration_progress as calibration_progress
    from rubriclib.reports.calibration import goldens_yaml as goldens_yaml
    from rubriclib.reports.evals import eval_last_line as eval_last_line
    from rubriclib.reports.goldens import GOLDENS_FORMATTERS as GOLDENS_FORMATTERS
    from rubriclib.reports.goldens import goldens_last_line as goldens_last_line
    from rubriclib.reports.html.page import build_report as build_report
    from rubriclib.reports.html.pages import calibration_page as calibration_page
    from rubriclib.reports.html.pages import eval_report_text as eval_report_text
    from rubriclib.reports.html.pages import goldens_page as goldens_page
    from rubriclib.reports.html.pages import is_html as is_html
    from rubriclib.reports.html.pages import messages_from as messages_from

_HOMES = {
    "ALIGNMENT_FORMATTERS": ".alignment",
    "CALIBRATION_FORMATTERS": ".calibration",
    "GOLDENS_FORMATTERS": ".goldens",
    "alignment_last_line": ".alignment",
    "budget_text": ".alignment",
    "build_report": ".html.page",
    "calibration_last_line": ".calibration",
    "calibration_progress": ".calibration",
    "calibration_page": ".html.pages",
    "eval_last_line": ".evals",
    "eval_report_text": ".html.pages",
    "goldens_last_line": ".goldens",
    "goldens_page": ".html.pages",
    "goldens_yaml": ".calibration",
    "is_html": ".html.pages",
    "messages_from": ".html.pages",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)
