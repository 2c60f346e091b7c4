"""The pytest plugins of every test in the tree: machines for the tests that boot tern
(tools/tern/fixtures.py), and skips that fail under CI=true (tools/tern/strict_skips.py)."""

pytest_plugins = ["tern.strict_skips", "tern.fixtures"]
