# stub bfcl_eval (see internal/testrig/stub/python/README.md)
