"""Adapters that let other harnesses run CoMMET's protocol (each imports its harness only when loaded)."""
