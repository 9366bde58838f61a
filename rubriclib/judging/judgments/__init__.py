"""One item's judgment as steps: its votes in the Judge's mode (`modes`: holistic, pairwise
orders, checklist items, probability answers decided by a judge profile), each made of single
judgments (`judgment`: the verdict cache, requests, retries, quirks, the corrective turn)."""
