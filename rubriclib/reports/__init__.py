"""Reports: views of what a run produced. Nothing here judges or measures.

`common` (what every report shares: xml_safe, numbers as text, JUnit), the text, JSON and JUnit
reports of an eval (`evals`), a goldens run (`goldens`) and a calibration (`calibration`, also
its disagreements as goldens); the HTML report: `data` (a results file as the page's data),
`checklists`, `comparison` (two runs), `html` (the page, with `html_report_page.html`/`.js` and
`html_report_views.js` beside it) and `pages` (the page of a run just made).

Other rooms use: each report module's `FORMATTERS` (by --format) and `last_line`,
`calibration.goldens_yaml`, `html.build_report`, `pages`' `eval_report_text`, `goldens_page`,
`calibration_page`, `messages_from` and `is_html`. Only `integrations` and `cli` import it.
"""
