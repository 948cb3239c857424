"""Helpers that tests in both tiers import."""
