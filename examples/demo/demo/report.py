"""A report of shapes."""
import os

from demo.shapes import Rectangle, describe


def report(shapes: list[Rectangle]) -> list[str]:
    """One line per shape."""
    lines = [ describe(s) for s in shapes ]
    return lines


def total_area(shapes: list[Rectangle]) -> int:
    """The sum of the areas."""
    return sum(s.area() for s in shapes)
