"""The numba kernels: the only package that imports numba.

Kernels know nothing of rules: they compare dice against the tables that
:mod:`mathhammer.compile` prepared (layout in :mod:`mathhammer.codes`).
"""

from .simulate import simulate_chunks

__all__ = ["simulate_chunks"]
