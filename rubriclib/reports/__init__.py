"""Reports: views of what a run produced. Nothing here judges or measures.

`common` (what every report shares: xml_safe, numbers as text, JUnit), the text, JSON and JUnit
reports of an eval (`evals`), a goldens run (`goldens`) and a calibration (`calibration`, also
its disagreements as goldens); the HTML report: `data` (a results file as the page's data),
`checklists`, `comparison` (two runs), `html` (the page, with `html_report_page.html`/`.js` and
`html_report_views.js` beside it) and `pages` (the page of a run just made).

Other rooms import only the names of the face below (an import-linter contract holds them to it).
Only `integrations` and `cli` import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.reports.calibration import CALIBRATION_FORMATTERS as CALIBRATION_FORMATTERS
    from rubriclib.reports.calibration import calibration_last_line as calibration_last_line
    from rubriclib.reports.calibration import goldens_yaml as goldens_yaml
    from rubriclib.reports.evals import eval_last_line as eval_last_line
    from rubriclib.reports.goldens import GOLDENS_FORMATTERS as GOLDENS_FORMATTERS
    from rubriclib.reports.goldens import goldens_last_line as goldens_last_line
    from rubriclib.reports.html import build_report as build_report
    from rubriclib.reports.pages import calibration_page as calibration_page
    from rubriclib.reports.pages import eval_report_text as eval_report_text
    from rubriclib.reports.pages import goldens_page as goldens_page
    from rubriclib.reports.pages import is_html as is_html
    from rubriclib.reports.pages import messages_from as messages_from

_HOMES = {
    "CALIBRATION_FORMATTERS": ".calibration",
    "GOLDENS_FORMATTERS": ".goldens",
    "build_report": ".html",
    "calibration_last_line": ".calibration",
    "calibration_page": ".pages",
    "eval_last_line": ".evals",
    "eval_report_text": ".pages",
    "goldens_last_line": ".goldens",
    "goldens_page": ".pages",
    "goldens_yaml": ".calibration",
    "is_html": ".pages",
    "messages_from": ".pages",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)
