"""The reference profiles (YAML), shipped in the wheel as the data package ``mathhammer.builtin_profiles``."""
