"""Adapters for the services minicinder calls (only Nova so far)."""
