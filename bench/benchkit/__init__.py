"""Pieces of bench/run: output parsers, /proc readings, the servers, the plan, the report and charts."""
