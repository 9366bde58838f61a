"""Commands about rubrics themselves: list, show, render, new (`library`), validate, the lock
and its pins (`versions`), search and index (`sharing`). None of them judges."""
