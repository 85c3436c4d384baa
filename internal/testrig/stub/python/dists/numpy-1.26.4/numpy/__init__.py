__version__ = "1.26.4"
