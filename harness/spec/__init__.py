"""Suite files: schema, YAML loading with file:line errors, planning into cases."""
