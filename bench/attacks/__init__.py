"""The attacks of bench/attack.py, one function each (see its docstring)."""
