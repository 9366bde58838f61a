"""Reports: views of what a run produced. Nothing here judges or measures.

`common` (what every report shares: safe text, numbers, JUnit), the text, JSON and JUnit reports
of an eval (`evals`), a goldens run (`goldens`) and a calibration (`calibration`); the HTML report:
`data` (a results file as the page's data), `checklists`, `comparison` (two runs), `html` (the
page, with `html_report_page.html`/`.js` beside it) and `pages` (the page of a run just made).

Other rooms use: each report module's `format_table` / `format_json` / `format_junit`,
`html.build_report`, `pages`. This room imports every room below it and is imported only by
`integrations` and `cli`.
"""
