"""letta-evals graders judged by rubriclib rubrics; written by `rubriclib integrations letta`.

In suite.yaml, name the rubric after the colon (a name, a pin, or a path beside this file):

    graders:
      grounded:
        kind: tool
        function: rubriclib_grader.py:groundedness@^1

The logic lives in rubriclib.integrations.letta: upgrading rubriclib needs no new copy.
"""

from rubriclib.integrations.letta import graders_for as _graders_for

__getattr__ = _graders_for(__file__)
