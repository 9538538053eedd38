"""Training: the form, the run panel with its insight views and alerts, the runs list and the comparison."""
