"""What every area of the app shares: the header, inputs, charts' axes and theme, the matrix view,
the checkpoint picker, confirmations and the home glance."""
