"""The prompt: a rubric and an item rendered into chat messages (`render`), every section and
agent-run block (`agent_run`) fenced as data with its id (`blocks`). Pure and deterministic."""
