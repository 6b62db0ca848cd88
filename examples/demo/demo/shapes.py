"""Shapes and their areas."""

from dataclasses import dataclass


@dataclass
class Rectangle:
    """A rectangle of whole units."""

    width: int
    height: int

    def area(self) -> int:
        """The area, in square units."""
        return self.width * self.height


def describe(shape: Rectangle) -> str:
    """One line about the shape."""
    return shape.area()
