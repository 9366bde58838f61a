"""letta-evals rows as letta reads them: `runs` (a row's recorded messages, each read by
`messages`, as one run) -> `extractors` (letta's built-in extractors, ported, on that run) ->
`rows` (a row's turns, rubric_vars, own rubric and submission) -> `prompts` (the prompt letta
would build, checked) -> `scoring` (a row graded turn by turn as one result, as letta-evals
scores it).

Other rooms use: `rubric_fields` (a letta sample's fields as a rubric's).
"""

from rubriclib.evals.letta.rows import rubric_fields

__all__ = ["rubric_fields"]
