"""The mock interview: its screen, its views, how it ends and its trend chart."""
