"""``python -m minigpt.cli …``: how the app's worker launcher, torchrun and the tests start a command."""

from minigpt.cli.main import main

if __name__ == "__main__":
    main()
