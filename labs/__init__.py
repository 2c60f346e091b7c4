"""The labs, one folder each (see tools/tern/labs.py).

labs/ and each lab's folder are packages so that pytest can tell apart two labs' test files
of the same name (each lab has a test_lab_discrimination.py).
"""
