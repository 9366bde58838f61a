"""Remote rubrics: references to a rubric in another repository (or at one https URL), fetched
with git into a content-addressed cache and pinned in the lock. Part of the rubrics room: its
modules are imported by the room's own modules (the registry, the lock), never from outside.

In order: `reference` (pure: which references are remote, what they name, what is refused) ->
`fetching` (git and https, with time and size limits) -> `store` (the cache, by sha256) ->
`loading` (a reference -> a Rubric, online or offline, the lock's pin first); `index` (indexes
of rubrics: written for a folder, read from a file or a URL, searched).
"""
