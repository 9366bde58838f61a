"""What one judgment asks and how its reply is read: request bodies shaped for an endpoint's
quirks (`request`), verdicts read from replies, their citations checked (`reply`), `Asking` and
the corrective turns (`protocol`), a checklist item's one-tool protocol (`checklist_protocol`),
and probability answers (`probability_answers`). Pure: no I/O."""
