"""A small MCP server on stdio, for docs/mcp.md: ``python docs/examples/mcp_server.py``."""

from zigai import mcp
from zigai.reflect import tool


def convert(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32


server = mcp.Server("unit-converter", "1.0", instructions="Converts units.")
server.add_tool(tool("convert", None, convert))
server.add_resource("units://list", lambda uri, request: "celsius, fahrenheit", name="units",
                    mime_type="text/plain")

if __name__ == "__main__":
    mcp.serve_stdio(server)
