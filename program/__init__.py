"""What `__main__.py` needs besides the components: the stack's config and secrets as the Pulumi engine hands them
(`config.py`), and the stack outputs, the contract other stacks read (`outputs.py`)."""
