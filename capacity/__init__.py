"""What-if: replay a demand trace through a stack's real scaling settings (`python -m capacity`)."""
