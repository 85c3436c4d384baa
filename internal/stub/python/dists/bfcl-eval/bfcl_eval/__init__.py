# stub bfcl_eval (see internal/stub/python/README.md)
