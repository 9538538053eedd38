"""The attention stepper, its matrices and its trained model."""
