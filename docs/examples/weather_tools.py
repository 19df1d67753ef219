"""A weather tool for the streaming example in docs/output-and-streaming.md."""

from typing import TypedDict


class Weather(TypedDict):
    city: str
    temperature_c: int


def get_weather(city: str) -> Weather:
    """Current weather for a city (fixed values for the example)."""
    return {"city": city, "temperature_c": 21}
