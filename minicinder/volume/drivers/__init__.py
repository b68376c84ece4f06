"""Storage backends: the LVM driver and the fake one unit tests use."""
