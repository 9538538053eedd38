"""Flashcards, the quiz, flagged cards, the study dashboard and the plan to an interview date."""
