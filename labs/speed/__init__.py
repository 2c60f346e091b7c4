"""The speed lab: see README.md here."""
