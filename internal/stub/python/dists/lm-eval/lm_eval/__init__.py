# stub lm-evaluation-harness (see internal/stub/python/README.md)
