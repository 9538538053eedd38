"""Katas: the list and the kata screen."""
