"""The home screen, help and the too-small guard: the app's shell."""
