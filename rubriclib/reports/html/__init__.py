"""The HTML report, a part of the reports room: `data` (a results file as the page's data),
`comparison` (two results files: changed verdicts, pass-rate changes), `page` (the data
-> one self-contained page, with `html_report_page.html` and the scripts beside it inlined under
a CSP), `pages` (the page of a run just made: eval, goldens, calibration) and `explored` (what
a page shows of an explored judgment: its trail, the blocks read, the search hits cited).

Other rooms import these through the reports face (`rubriclib.reports`), never from here.
"""
