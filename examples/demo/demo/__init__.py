"""A small project with a few deliberate problems, to try qg on."""
