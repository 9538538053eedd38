"""``minigpt serve``: the tutor in a browser tab through textual-serve."""
