"""Placeholder: the pytest plugin is being written."""
