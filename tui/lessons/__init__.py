"""Reading a lesson: the list, the lesson screen, its blocks and snippets, its reading place and the lab jobs it starts."""
