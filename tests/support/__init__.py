"""Helpers shared by tests, one module per area, imported as `tests.support.<area>` (fixtures stay in each
folder's conftest.py). Test modules never import each other: what two of them share lives here."""
