# stub lm-evaluation-harness (see internal/testrig/stub/python/README.md)
