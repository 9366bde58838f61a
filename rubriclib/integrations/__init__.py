"""Adapters for the eval tools people already run: promptfoo, inspect_ai and letta-evals.

Each adapter imports its tool only when used; `import rubriclib` imports none of them.
"""
